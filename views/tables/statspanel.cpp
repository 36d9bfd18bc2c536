// SPDX-License-Identifier: MIT
#include "views/tables/statspanel.h"

#include "views/common/statstable.h"
#include "views/common/timeformat.h"
#include "views/tables/hosttablemodel.h"
#include "views/tables/kerneltablemodel.h"
#include "views/tables/membertablemodel.h"
#include "views/tables/rangetablemodel.h"
#include "views/tables/stephistogram.h"
#include "views/tables/steptablemodel.h"

#include <QCoreApplication>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

using namespace gapscope::model;

StatsPanel::StatsPanel(QWidget* parent)
    : QWidget(parent)
    , m_kernels(new KernelTableModel(KernelTableModel::Mode::Names, this))
    , m_components(new KernelTableModel(KernelTableModel::Mode::Components, this))
    , m_steps(new StepTableModel(this))
    , m_members(new MemberTableModel(this))
    , m_host(new HostTableModel(this))
    , m_ranges(new RangeTableModel(this))
    , m_histogram(new StepHistogram)
    , m_tabs(new QTabWidget)
    , m_scope(new QLabel)
{
    auto* kernelTable = m_kernelTable = new StatsTable(m_kernels, KernelTableModel::Name);
    auto* componentTable = new StatsTable(m_components, KernelTableModel::Name);
    auto* stepTable = new StatsTable(m_steps, 0);
    m_memberTable = new StatsTable(m_members, MemberTableModel::What);
    kernelTable->setNameColumn(KernelTableModel::Name);
    componentTable->setNameColumn(KernelTableModel::Name);
    m_memberTable->setNameColumn(MemberTableModel::What);
    m_hostTable = new StatsTable(m_host, HostTableModel::HostEvent);
    m_hostTable->setNameColumn(HostTableModel::HostEvent);
    m_rangeTable = new StatsTable(m_ranges, RangeTableModel::OwnTime);
    m_rangeTable->setNameColumn(RangeTableModel::Range);
    // The full names are for the CSV; the view shows them on hover.
    kernelTable->view()->hideColumn(KernelTableModel::FullName);
    componentTable->view()->hideColumn(KernelTableModel::FullName);
    m_memberTable->view()->hideColumn(MemberTableModel::FullName);
    auto* stepSplit = new QSplitter(Qt::Horizontal);
    stepSplit->addWidget(stepTable);
    stepSplit->addWidget(m_histogram);
    stepSplit->setStretchFactor(0, 3);
    stepSplit->setStretchFactor(1, 2);
    m_tabs->addTab(kernelTable, tr("Kernels"));
    m_tabs->addTab(componentTable, tr("Components"));
    m_tabs->addTab(stepSplit, tr("Steps"));
    m_tabs->addTab(m_memberTable, tr("Bar members"));
    m_tabs->addTab(m_hostTable, tr("Host"));
    m_tabs->addTab(m_rangeTable, tr("Ranges"));
    m_scope->setStyleSheet(QStringLiteral("color:#607d8b"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(m_scope);
    layout->addWidget(m_tabs, 1);

    connect(stepTable, &StatsTable::rowActivated, this, [this](int row) {
        if (row >= 0 && row < int(m_steps->stepIndices().size()))
            emit stepActivated(m_steps->stepIndices()[size_t(row)]);
    });
    connect(stepTable->view()->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this, stepTable] {
        const auto rows = stepTable->view()->selectionModel()->selectedRows();
        if (rows.isEmpty())
            return;
        uint32_t lo = UINT32_MAX, hi = 0;
        for (const QModelIndex& idx : rows) {
            const uint32_t step = m_steps->stepIndices()[size_t(stepTable->proxy()->mapToSource(idx).row())];
            lo = std::min(lo, step);
            hi = std::max(hi, step);
        }
        emit stepsSelected(lo, hi);
    });
    connect(m_histogram, &StepHistogram::binClicked, this, [this, stepTable](double lo, double hi) {
        QList<int> rows;
        for (int r = 0; r < m_steps->rowCount(); ++r) {
            const double v = m_steps->slowestMs(r);
            if (v >= lo - 1e-9 && v <= hi + 1e-9)
                rows << r;
        }
        stepTable->selectSourceRows(rows);
    });
    connect(m_memberTable, &StatsTable::rowActivated, this, [this](int row) {
        if (const BarMember* m = m_members->member(row))
            emit memberActivated(*m);
    });
    connect(m_hostTable->view()->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
        [this](const QModelIndex& current) {
            if (current.isValid())
                emit hostRowSelected(m_hostTable->proxy()->mapToSource(current).row());
        });
    connect(m_hostTable, &StatsTable::rowActivated, this, &StatsPanel::hostRowSelected);
    connect(kernelTable, &StatsTable::rowActivated, this, [this](int row) {
        if (const NameStats* s = m_kernels->row(row))
            emit kernelActivated(s->name);
    });
}

StatsPanel::~StatsPanel()
{
    m_jobs.cancel();
    m_rangeJobs.cancel();
}

void StatsPanel::setTimeOrigin(TimeNs origin)
{
    m_origin = origin;
    m_members->setTimeOrigin(origin);
}

void StatsPanel::setDocument(std::shared_ptr<const Trace> trace, std::shared_ptr<const EventColors> colors)
{
    m_jobs.cancel();
    m_computing = false;
    m_held = false;
    m_trace = std::move(trace);
    m_colors = std::move(colors);
    m_origin = m_trace ? m_trace->startTime() : 0;
    m_members->setTimeOrigin(m_origin);
    m_whole.reset();
    m_steps->setTrace(m_trace.get());
    std::vector<double> slowest;
    for (int r = 0; r < m_steps->rowCount(); ++r)
        slowest.push_back(m_steps->slowestMs(r));
    m_histogram->setValues(std::move(slowest));
    m_members->setMembers(m_trace.get(), {}, QString());
    setHostAttribution(nullptr);
    computeRanges();
    clearRange();
}

void StatsPanel::computeRanges()
{
    m_rangeJobs.cancel();
    m_ranges->setTable({});
    m_tabs->setTabText(m_tabs->indexOf(m_rangeTable), tr("Ranges"));
    if (!m_trace)
        return;
    m_rangeJobs.run(
        this,
        [trace = m_trace](const JobTracker::Ticket&) {
            return std::make_shared<RangeTable>(gapscope::model::rangeTable(*trace, KernelRanges::of(*trace)));
        },
        [](StatsPanel& self, const std::shared_ptr<RangeTable>& table) {
            self.m_ranges->setTable(std::move(*table));
            self.m_tabs->setTabText(
                self.m_tabs->indexOf(self.m_rangeTable), tr("Ranges (%1)").arg(self.m_ranges->rowCount()));
            emit self.rangesReady();
        });
}

void StatsPanel::applyStats(const KernelStatsResult& stats, const QString& scope)
{
    m_kernels->setStats(stats);
    m_components->setStats(stats);
    m_scope->setText(scope + tr(" · %1 ranks · %2 steps").arg(stats.ranks).arg(stats.steps));
}

void StatsPanel::clearRange()
{
    if (m_whole || !m_trace) {
        m_jobs.cancel();
        m_computing = false;
        m_held = false;
        applyStats(m_whole ? *m_whole : KernelStatsResult {}, tr("Whole trace"));
        emit statsReady();
        return;
    }
    compute(StatsScope {}, tr("Whole trace"), true);
}

void StatsPanel::setRange(TimeNs t0, TimeNs t1)
{
    if (!m_trace)
        return;
    StatsScope scope;
    scope.t0 = t0;
    scope.t1 = t1;
    compute(scope,
        tr("Selected range %1 (from +%2)")
            .arg(timeformat::duration(double(t1 - t0)), timeformat::duration(double(t0 - m_origin), 6)),
        false);
}

void StatsPanel::hold()
{
    if (!m_computing || m_held)
        return;
    m_jobs.cancel();
    m_held = true;
}

void StatsPanel::resume()
{
    if (!m_held)
        return;
    const Computation c = m_last;
    compute(c.scope, c.label, c.whole);
}

void StatsPanel::compute(const StatsScope& scope, const QString& label, bool whole)
{
    m_computing = true;
    m_held = false;
    m_last = { scope, label, whole };
    m_scope->setText(tr("Computing the statistics (%1)…").arg(label));
    m_jobs.run(
        this,
        [trace = m_trace, colors = m_colors, scope](const JobTracker::Ticket& ticket) {
            return std::make_shared<KernelStatsResult>(computeKernelStats(*trace, scope, colors.get(), ticket));
        },
        [label, whole](StatsPanel& self, const std::shared_ptr<KernelStatsResult>& stats) {
            if (stats->canceled)
                return;
            if (whole)
                self.m_whole = stats;
            self.m_computing = false;
            self.applyStats(*stats, label);
            emit self.statsReady();
        });
}

void StatsPanel::setMembers(const QString& bar, const QString& intervalName, std::vector<BarMember> members)
{
    m_members->setMembers(m_trace.get(), std::move(members), intervalName);
    m_tabs->setTabText(m_tabs->indexOf(m_memberTable), tr("Bar members: %1 (%2)").arg(bar).arg(m_members->rowCount()));
    m_tabs->setCurrentWidget(m_memberTable);
}

void StatsPanel::setHostAttribution(const HostAttribution* host)
{
    m_host->setAttribution(m_trace.get(), host);
    m_tabs->setTabText(m_tabs->indexOf(m_hostTable), host ? tr("Host (%1)").arg(m_host->rowCount()) : tr("Host"));
}

void StatsPanel::setBandwidthCeiling(double gbs)
{
    m_kernels->setBandwidthCeiling(gbs);
    m_components->setBandwidthCeiling(gbs);
}
