// SPDX-License-Identifier: MIT
#include "views/analysis/waterfallpanel.h"

#include "views/analysis/budgetprompt.h"
#include "views/analysis/waterfallchart.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMap>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTextDocument>
#include <QVBoxLayout>

using namespace gapscope::model;

namespace {
enum Scope { MedianStep, OneStep, AllSteps, SelectedSteps, SelectedRange };
}

WaterfallPanel::WaterfallPanel(QWidget* parent)
    : QWidget(parent)
    , m_scope(new QComboBox)
    , m_step(new QSpinBox)
    , m_rank(new QComboBox)
    , m_column(new QComboBox)
    , m_kind(new QComboBox)
    , m_status(new QLabel)
    , m_coverage(new QLabel)
    , m_coverageBox(new QScrollArea)
    , m_chart(new WaterfallChart)
    , m_hideEmpty(new QCheckBox(tr("hide empty bars")))
    , m_prompt(new BudgetPrompt)
{
    m_prompt->hide();
    m_hideEmpty->setChecked(m_chart->hideEmpty());
    m_hideEmpty->setToolTip(tr("Leave out the bars that are zero in every step (a budget component the model does "
                               "not have, a class in which no kernel ran)"));
    connect(m_hideEmpty, &QCheckBox::toggled, m_chart, &WaterfallChart::setHideEmpty);
    m_scope->addItem(tr("median step"), MedianStep);
    m_scope->addItem(tr("step"), OneStep);
    m_scope->addItem(tr("all steps (mean)"), AllSteps);
    m_scope->addItem(tr("selected steps (mean)"), SelectedSteps);
    m_scope->addItem(tr("selected range"), SelectedRange);
    m_rank->addItem(tr("critical rank"), GapAnalyzer::kCriticalRank);
    m_column->addItem(tr("achievable budget"), true);
    m_column->addItem(tr("ideal budget"), false);
    m_column->setToolTip(tr("Achievable: efficiencies, kernel floors and launch costs. Ideal: datasheet ceilings."));
    m_step->setRange(0, 0);
    auto* controls = new QHBoxLayout;
    controls->addWidget(m_scope);
    controls->addWidget(m_step);
    controls->addWidget(m_rank);
    controls->addWidget(m_column);
    controls->addWidget(m_kind);
    controls->addWidget(m_hideEmpty);
    controls->addStretch(1);
    m_status->setWordWrap(true);
    m_status->setStyleSheet(QStringLiteral("color:#607d8b"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(controls);
    layout->addWidget(m_prompt);
    layout->addWidget(m_chart, 1);
    layout->addWidget(m_status);
    m_coverage->setWordWrap(true);
    m_coverage->setTextFormat(Qt::RichText);
    m_coverage->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_coverage->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_coverageBox->setWidget(m_coverage);
    m_coverageBox->setWidgetResizable(true);
    m_coverageBox->setFrameShape(QFrame::NoFrame);
    m_coverageBox->setMaximumHeight(fontMetrics().lineSpacing() * 5 + 6); // never more: the chart keeps its room
    m_coverageBox->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);
    m_coverageBox->hide();
    layout->addWidget(m_coverageBox);
    auto changed = [this] {
        updateEnabled();
        emit requestChanged();
    };
    connect(m_scope, &QComboBox::currentIndexChanged, this, changed);
    connect(m_rank, &QComboBox::currentIndexChanged, this, changed);
    connect(m_step, &QSpinBox::valueChanged, this, changed);
    connect(m_column, &QComboBox::currentIndexChanged, this, [this] { emit budgetColumnChanged(achievable()); });
    m_kind->setToolTip(tr("The kind of step analysed (the decode budget is laid over decode steps); steps of other "
                          "kinds are shown on the timeline but left out of the waterfall, medians and findings"));
    m_kind->hide();
    m_kind->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_kind->setMinimumContentsLength(12);
    connect(m_kind, &QComboBox::activated, this,
        [this] { emit stepKindChanged(gapscope::model::StepKind(m_kind->currentData().toInt())); });
    updateEnabled();
}

void WaterfallPanel::setStepKinds(const std::vector<gapscope::model::StepKind>& present, gapscope::model::StepKind current)
{
    using gapscope::model::StepKind;
    QSignalBlocker block(m_kind);
    m_kind->clear();
    for (StepKind k : present)
        if (k != StepKind::Unknown)
            m_kind->addItem(tr("%1 steps").arg(QLatin1String(gapscope::model::toString(k))), int(k));
    m_kind->addItem(tr("steps of every kind"), int(StepKind::Unknown));
    m_kind->setCurrentIndex(std::max(0, m_kind->findData(int(current))));
    // Only where the steps are of several kinds is there a choice (every step decode: the same analysis).
    m_kind->setVisible(present.size() > 1);
}

void WaterfallPanel::updateEnabled()
{
    m_step->setVisible(m_scope->currentData().toInt() == OneStep);
}

void WaterfallPanel::setTraceInfo(const std::vector<uint32_t>& ranks, uint32_t firstStep, uint32_t lastStep)
{
    const QSignalBlocker b1(m_rank), b2(m_step);
    while (m_rank->count() > 1)
        m_rank->removeItem(1);
    for (uint32_t r : ranks)
        m_rank->addItem(tr("rank %1").arg(r), int(r));
    m_step->setRange(int(firstStep), int(std::max(firstStep, lastStep)));
    m_step->setValue(int(firstStep));
    m_first = firstStep;
    m_last = lastStep;
}

WaterfallRequest WaterfallPanel::request() const
{
    WaterfallRequest r;
    r.rank = m_rank->currentData().toInt();
    switch (m_scope->currentData().toInt()) {
    case MedianStep:
        r.kind = WaterfallRequest::Kind::Median;
        break;
    case OneStep:
        r.kind = WaterfallRequest::Kind::Step;
        r.firstStep = r.lastStep = uint32_t(m_step->value());
        break;
    case AllSteps:
        r.kind = WaterfallRequest::Kind::Steps;
        break;
    case SelectedSteps:
        r.kind = WaterfallRequest::Kind::Steps;
        r.firstStep = m_first;
        r.lastStep = m_last;
        break;
    case SelectedRange:
        r.kind = WaterfallRequest::Kind::Range;
        r.t0 = m_t0;
        r.t1 = m_t1;
        break;
    }
    return r;
}

void WaterfallPanel::setRequest(const WaterfallRequest& r)
{
    const QSignalBlocker b1(m_scope), b2(m_rank), b3(m_step);
    int scope = MedianStep;
    if (r.kind == WaterfallRequest::Kind::Step) {
        scope = OneStep;
        m_step->setValue(int(r.firstStep));
    } else if (r.kind == WaterfallRequest::Kind::Steps) {
        scope = r.firstStep == 0 && r.lastStep == GapAnalyzer::kAllSteps ? AllSteps : SelectedSteps;
        m_first = r.firstStep;
        m_last = r.lastStep;
    } else if (r.kind == WaterfallRequest::Kind::Range) {
        scope = SelectedRange;
        m_t0 = r.t0;
        m_t1 = r.t1;
    }
    m_scope->setCurrentIndex(m_scope->findData(scope));
    m_rank->setCurrentIndex(std::max(0, m_rank->findData(r.rank)));
    updateEnabled();
}

void WaterfallPanel::setSelectedRange(TimeNs t0, TimeNs t1)
{
    m_t0 = t0;
    m_t1 = t1;
    if (m_scope->currentData().toInt() == SelectedRange)
        emit requestChanged();
}

void WaterfallPanel::setSelectedSteps(uint32_t first, uint32_t last)
{
    m_first = first;
    m_last = last;
    if (m_scope->currentData().toInt() == SelectedSteps)
        emit requestChanged();
}

bool WaterfallPanel::achievable() const
{
    return m_column->currentData().toBool();
}

void WaterfallPanel::setData(const WaterfallData& data)
{
    m_chart->setData(data);
}

void WaterfallPanel::setStatus(const QString& text)
{
    m_status->setText(text);
}

QString WaterfallPanel::status() const
{
    const QString cov = coverageText();
    return cov.isEmpty() ? m_status->text() : m_status->text() + QLatin1Char('\n') + cov;
}

void WaterfallPanel::setCoverage(const std::vector<gapscope::model::CoverageItem>& items, const QStringList& notes)
{
    using gapscope::model::CoverageVerdict;
    QString html;
    QStringList ok;
    for (const auto& c : items) {
        if (c.verdict == CoverageVerdict::Ok) {
            ok << QString::fromStdString(c.name);
            continue;
        }
        const bool bad = c.verdict == CoverageVerdict::Bad;
        html += QStringLiteral("<div><b style=\"color:%1\">%2</b> %3: %4</div>")
                    .arg(bad ? QStringLiteral("#c62828") : QStringLiteral("#b26a00"),
                        QString::fromLatin1(toString(c.verdict)), QString::fromStdString(c.name).toHtmlEscaped(),
                        QString::fromStdString(c.meaning).toHtmlEscaped());
    }
    if (!ok.isEmpty())
        html += QStringLiteral("<div><b style=\"color:#2e7d32\">ok</b> %1</div>")
                    .arg(ok.join(QStringLiteral(", ")).toHtmlEscaped());
    // Notes that say the same thing once, with how many times.
    QStringList order;
    QMap<QString, int> count;
    for (const QString& n : notes)
        if (count[n]++ == 0)
            order << n;
    for (const QString& n : order)
        html += QStringLiteral("<div style=\"color:#607d8b\">%1%2</div>")
                    .arg(n.toHtmlEscaped(), count[n] > 1 ? QStringLiteral(" (%1 times)").arg(count[n]) : QString());
    m_coverage->setText(html);
    m_coverageBox->setVisible(!html.isEmpty());
}

QString WaterfallPanel::coverageText() const
{
    QTextDocument doc;
    doc.setHtml(m_coverage->text());
    return doc.toPlainText();
}

void WaterfallPanel::setBudgetPresent(bool present)
{
    m_prompt->setVisible(!present);
    m_column->setEnabled(present);
}
