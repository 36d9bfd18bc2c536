// SPDX-License-Identifier: MIT
#include "views/analysis/querypanel.h"

#include "model/analysis/hostattribution.h"
#include "model/io/tracewindow.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QShortcut>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <mutex>
#include <optional>

using namespace gapscope::model;
using gapscope::model::sql::ResultValue;

// The trace and its analysis, built on the first query that needs it and kept for the next ones.
struct QueryPanel::Source {
    std::shared_ptr<const Trace> trace;
    std::optional<KernelClassifier> classifier;
    StepBudget budget;
    GapAnalyzer::Options options;
    std::mutex lock;
    std::unique_ptr<GapAnalyzer> analyzer;
    std::unique_ptr<HostAttribution> host;

    sql::TraceTables::Analysis analysis()
    {
        sql::TraceTables::Analysis a;
        a.classifier = &*classifier;
        a.analyzer = [this]() -> const GapAnalyzer* {
            std::lock_guard<std::mutex> l(lock);
            if (!analyzer)
                analyzer = std::make_unique<GapAnalyzer>(*trace, *classifier, budget, options);
            return analyzer.get();
        };
        a.host = [this]() -> const HostAttribution* {
            std::lock_guard<std::mutex> l(lock);
            if (!host && analyzer) {
                GapAnalyzer::Selection all;
                all.kind = GapAnalyzer::Selection::Kind::Steps;
                all.rank = GapAnalyzer::kCriticalRank;
                host = std::make_unique<HostAttribution>(*analyzer, all, true);
            }
            return host.get();
        };
        return a;
    }
};

// --- the result table ----------------------------------------------------------------------------

void QueryResultModel::setResult(std::shared_ptr<const QueryResult> result)
{
    beginResetModel();
    m_result = std::move(result);
    endResetModel();
}

int QueryResultModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_result ? 0 : int(m_result->rows.size());
}

int QueryResultModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_result ? 0 : int(m_result->columns.size());
}

QVariant QueryResultModel::data(const QModelIndex& index, int role) const
{
    if (!m_result || !index.isValid())
        return {};
    const ResultValue& v = m_result->rows[size_t(index.row())][size_t(index.column())];
    const bool number = v.type == ResultValue::Type::Integer || v.type == ResultValue::Type::Real;
    switch (role) {
    case Qt::DisplayRole:
        return v.type == ResultValue::Type::Null ? QStringLiteral("NULL") : QString::fromStdString(v.text);
    case Qt::ToolTipRole:
        return v.type == ResultValue::Type::Text && v.text.size() > 60 ? QString::fromStdString(v.text) : QVariant();
    case Qt::TextAlignmentRole:
        return QVariant::fromValue(number ? Qt::AlignRight | Qt::AlignVCenter : Qt::AlignLeft | Qt::AlignVCenter);
    case Qt::UserRole: // sorting and tests: the value itself
        return v.type == ResultValue::Type::Integer ? QVariant(qlonglong(v.i))
            : v.type == ResultValue::Type::Real     ? QVariant(v.d)
                                                    : QVariant(QString::fromStdString(v.text));
    default:
        return {};
    }
}

QVariant QueryResultModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (role != Qt::DisplayRole || !m_result)
        return {};
    if (orientation == Qt::Horizontal)
        return QString::fromStdString(m_result->columns[size_t(section)]);
    return section + 1;
}

// --- rows on the timeline --------------------------------------------------------------------------

TimelineHighlight highlightOfRows(
    const Trace& trace, const QueryResult& result, const std::vector<size_t>& rows, TimeNs& t0, TimeNs& t1)
{
    TimelineHighlight h;
    h.label = QObject::tr("query rows");
    h.color = QColor(255, 140, 0, 90);
    h.events.resize(trace.laneCount());
    t0 = INT64_MAX;
    t1 = INT64_MIN;
    auto column = [&result](const char* name) -> int {
        for (size_t i = 0; i < result.columns.size(); ++i)
            if (result.columns[i] == name)
                return int(i);
        return -1;
    };
    const int cRank = column("rank"), cStep = column("step"), cStart = column("start"), cEnd = column("end"),
              cDur = column("dur"), cName = column("name");
    auto integer = [](const std::vector<ResultValue>& row, int c, int64_t& out) {
        if (c < 0 || row[size_t(c)].type != ResultValue::Type::Integer)
            return false;
        out = row[size_t(c)].i;
        return true;
    };
    auto addSpan = [&](uint32_t rank, TimeNs a, TimeNs b) {
        if (b <= a)
            return;
        if (h.spans.size() <= rank)
            h.spans.resize(size_t(rank) + 1);
        h.spans[rank].push_back({ a, b });
        t0 = std::min(t0, a);
        t1 = std::max(t1, b);
    };
    auto addStep = [&](uint32_t rank, int64_t step) {
        const auto& steps = trace.steps(rank);
        for (size_t i = 0; i < steps.size(); ++i)
            if (steps[i].index == step)
                addSpan(rank, steps[i].start, stepWindowEnd(steps, i));
    };
    const std::vector<uint32_t> ranks = trace.ranks();
    for (size_t r : rows) {
        if (r >= result.rows.size())
            continue;
        const auto& row = result.rows[r];
        int64_t rank = 0, step = 0, start = 0, end = 0, dur = 0;
        const bool hasRank = integer(row, cRank, rank) && rank >= 0;
        if (integer(row, cStart, start)) {
            const bool hasDur = integer(row, cDur, dur) || (integer(row, cEnd, end) && (dur = end - start, true));
            const std::string* name
                = cName >= 0 && row[size_t(cName)].type == ResultValue::Type::Text ? &row[size_t(cName)].text : nullptr;
            bool found = false;
            for (const Lane& lane : trace.lanes()) {
                if (hasRank && lane.info.rank != uint32_t(rank))
                    continue;
                const LaneEvents& ev = lane.events;
                for (size_t i = ev.lowerBound(start); i < ev.size() && ev.start(i) == start; ++i) {
                    if ((hasDur && ev.duration(i) != dur) || (name && trace.str(ev.name(i)) != *name))
                        continue;
                    h.events[lane.id].push_back(uint32_t(i));
                    t0 = std::min(t0, start);
                    t1 = std::max(t1, ev.end(i));
                    found = true;
                }
            }
            if (!found && hasDur)
                for (uint32_t k : ranks)
                    if (!hasRank || k == uint32_t(rank))
                        addSpan(k, start, start + dur);
        } else if (integer(row, cStep, step)) {
            for (uint32_t k : ranks)
                if (!hasRank || k == uint32_t(rank))
                    addStep(k, step);
        }
    }
    h.normalize();
    return h;
}

// --- the panel ---------------------------------------------------------------------------------------

QueryPanel::QueryPanel(QWidget* parent)
    : QWidget(parent)
    , m_edit(new QPlainTextEdit)
    , m_run(new QPushButton(tr("Run")))
    , m_all(new QPushButton(tr("Light up all")))
    , m_status(new QLabel)
    , m_table(new QTableView)
    , m_model(new QueryResultModel(this))
{
    m_edit->setPlaceholderText(tr("SQL over kernels, steps, bars, collectives, host_events, gaps, counters, ranks, "
                                  "gpus (times in ns; docs/SQL.md). Ctrl+Return runs it."));
    m_edit->setPlainText(QStringLiteral("select short_name, count(*) as n, sum(own) / 1e6 as own_ms\nfrom kernels "
                                        "group by short_name order by own_ms desc limit 20;"));
    m_edit->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 4);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->setWordWrap(true);
    m_all->setEnabled(false);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_run);
    buttons->addWidget(m_all);
    buttons->addWidget(m_status, 1);
    auto* top = new QWidget;
    auto* topLayout = new QVBoxLayout(top);
    topLayout->setContentsMargins(0, 0, 0, 0);
    topLayout->addWidget(m_edit);
    topLayout->addLayout(buttons);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(top);
    split->addWidget(m_table);
    split->setStretchFactor(1, 3);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(split);
    connect(m_run, &QPushButton::clicked, this, &QueryPanel::run);
    auto* shortcut = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return), m_edit);
    connect(shortcut, &QShortcut::activated, this, &QueryPanel::run);
    connect(m_all, &QPushButton::clicked, this, [this] {
        std::vector<size_t> all(size_t(m_model->rowCount()));
        for (size_t i = 0; i < all.size(); ++i)
            all[i] = i;
        lightUp(all);
    });
    connect(m_table, &QTableView::clicked, this, [this](const QModelIndex& i) { lightUp({ size_t(i.row()) }); });
    m_run->setEnabled(false);
}

void QueryPanel::setTrace(std::shared_ptr<const Trace> trace, KernelClassifier classifier, StepBudget budget,
    StepKind kind, const QString& scope)
{
    m_jobs.cancel();
    m_running = false;
    m_source.reset();
    m_scope = scope;
    if (trace) {
        m_source = std::make_shared<Source>();
        m_source->trace = std::move(trace);
        m_source->classifier = std::move(classifier);
        m_source->budget = std::move(budget);
        m_source->options.kind = kind;
    }
    m_run->setEnabled(m_source != nullptr);
    m_status->setText(m_source ? scope : tr("no trace"));
}

void QueryPanel::setSql(const QString& sql)
{
    m_edit->setPlainText(sql);
}

QString QueryPanel::sql() const
{
    return m_edit->toPlainText();
}

QString QueryPanel::status() const
{
    return m_status->text();
}

void QueryPanel::run()
{
    if (!m_source)
        return;
    m_running = true;
    m_status->setText(tr("Running…"));
    m_jobs.run(
        this,
        [source = m_source, text = sql().toStdString()](const JobTracker::Ticket& ticket) {
            auto result = std::make_shared<QueryResult>();
            QElapsedTimer timer;
            timer.start();
            sql::TraceTables tables(*source->trace, source->analysis(), {});
            auto session = sql::SqlSession::open(tables);
            if (!session) {
                result->error = QString::fromStdString(session.error());
            } else {
                sql::ResultSink sink;
                sink.begin = [&](const std::vector<std::string>& columns) { // the last statement's rows are shown
                    result->columns = columns;
                    result->rows.clear();
                    result->totalRows = 0;
                };
                sink.row = [&](const std::vector<ResultValue>& row) {
                    if (ticket.stale())
                        return false;
                    if (result->rows.size() < kMaxRows)
                        result->rows.push_back(row);
                    ++result->totalRows;
                    return true;
                };
                gapscope::Status s = (*session)->run(text, sink);
                if (!s)
                    result->error = QString::fromStdString(s.message());
            }
            result->seconds = double(timer.nsecsElapsed()) / 1e9;
            return result;
        },
        [](QueryPanel& self, const std::shared_ptr<QueryResult>& result) {
            self.m_running = false;
            self.m_model->setResult(result);
            self.m_all->setEnabled(!result->rows.empty());
            QString text = result->error.isEmpty()
                ? tr("%n row(s) in %1 s", nullptr, int(std::min<uint64_t>(result->totalRows, INT32_MAX)))
                      .arg(result->seconds, 0, 'f', 2)
                : result->error;
            if (result->totalRows > result->rows.size())
                text += tr("; the first %1 shown").arg(result->rows.size());
            if (!self.m_scope.isEmpty())
                text += QStringLiteral(" (") + self.m_scope + QStringLiteral(")");
            self.m_status->setText(text);
            emit self.finished();
        });
}

void QueryPanel::lightUp(const std::vector<size_t>& rows)
{
    const QueryResult* r = m_model->result();
    if (!r || !m_source)
        return;
    TimeNs t0 = 0, t1 = 0;
    TimelineHighlight h = highlightOfRows(*m_source->trace, *r, rows, t0, t1);
    if (h.empty() || t0 >= t1)
        return;
    emit highlightRequested(h, t0, t1);
}
