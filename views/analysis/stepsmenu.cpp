// SPDX-License-Identifier: MIT
#include "views/analysis/stepsmenu.h"

#include "model/steps/stepfinder.h"
#include "model/trace/tracesummary.h"
#include "views/document/tracedocument.h"

#include <QInputDialog>
#include <QRegularExpression>

using namespace gapscope::model;

namespace {

QString stepsText(uint32_t n)
{
    return n == 1 ? StepsMenu::tr("1 step") : StepsMenu::tr("%1 steps").arg(n);
}

} // namespace

StepsMenu::StepsMenu(QWidget* parent)
    : QMenu(tr("&Steps"), parent)
{
    connect(this, &QMenu::aboutToShow, this, &StepsMenu::countCandidates);
    rebuild();
}

void StepsMenu::setDocument(std::shared_ptr<const TraceDocument> doc)
{
    m_doc = std::move(doc);
    m_counts.clear();
    m_counting = false;
    m_jobs.cancel();
    rebuild();
}

void StepsMenu::rebuild()
{
    clear();
    m_ruleActions.clear();
    if (!m_doc || !m_doc->trace) {
        addAction(tr("No trace"))->setEnabled(false);
        return;
    }
    const Trace& t = *m_doc->trace;
    const StepReport& r = t.stepReport();
    QStringList kinds;
    const auto perKind = stepKindCounts(t);
    for (size_t k = 0; k < kStepKinds; ++k)
        if (perKind[k])
            kinds << QStringLiteral("%1 %2").arg(perKind[k]).arg(QString::fromLatin1(toString(StepKind(k))));
    const QString rule = r.rule.empty() ? tr("stored in the file") : QString::fromStdString(r.rule);
    addAction(tr("Rule in use: %1 (%2)").arg(rule, QString::fromLatin1(toString(r.source))))->setEnabled(false);
    addAction(stepsText(t.stepCount()) + (kinds.isEmpty() ? QString() : QStringLiteral(": ") + kinds.join(QStringLiteral(", "))))
        ->setEnabled(false);
    if (t.stepCount() == 0)
        for (const auto& line : r.tried)
            addAction(QString::fromStdString(line))->setEnabled(false);
    addSeparator();
    auto addRule = [this](const QString& text, const QString& rule) {
        QAction* a = addAction(text);
        a->setData(rule);
        connect(a, &QAction::triggered, this, [this, rule] { emit ruleChosen(rule); });
        m_ruleActions << a;
    };
    addRule(tr("Auto: the evidence in order"), QStringLiteral("auto"));
    const QStringList names = { tr("Engine step annotations"), tr("Graph launches"), tr("One step per forward"),
        tr("Period of the kernel sequence") };
    const QStringList rules = { QStringLiteral("engine"), QStringLiteral("graph"), QStringLiteral("forward"),
        QStringLiteral("period") };
    for (int i = 0; i < rules.size(); ++i) {
        QString count = m_counting ? tr(" — counting…") : QString();
        for (const auto& [rule, n] : m_counts)
            if (rule == rules[i])
                count = QStringLiteral(" — ") + stepsText(uint32_t(n));
        addRule(names[i] + count, rules[i]);
    }
    QAction* nvtx = addAction(tr("NVTX ranges named…"));
    connect(nvtx, &QAction::triggered, this, [this] { askPattern(QStringLiteral("nvtx")); });
    QAction* anchor = addAction(tr("Anchor kernel…"));
    connect(anchor, &QAction::triggered, this, [this] { askPattern(QStringLiteral("anchor")); });
    if (!r.anchorCandidates.empty()) {
        QMenu* sub = addMenu(tr("Kernels once per forward"));
        for (const auto& name : r.anchorCandidates) {
            const QString n = QString::fromStdString(name);
            QAction* a = sub->addAction(n.left(80));
            const QString rule = QStringLiteral("anchor:") + QRegularExpression::escape(n.left(60));
            a->setData(rule);
            connect(a, &QAction::triggered, this, [this, rule] { emit ruleChosen(rule); });
        }
    }
    addSeparator();
    addRule(tr("Keep the steps stored in the file"), QStringLiteral("file"));
}

void StepsMenu::countCandidates()
{
    if (!m_doc || !m_doc->trace || m_counting || !m_counts.empty())
        return;
    m_counting = true;
    rebuild();
    m_jobs.run(
        this,
        [trace = m_doc->trace](const JobTracker::Ticket& ticket) {
            return ticket.stale() ? std::vector<StepFinder::Candidate>() : StepFinder::candidates(*trace);
        },
        [](StepsMenu& self, const std::vector<StepFinder::Candidate>& found) {
            self.m_counting = false;
            self.m_counts.clear();
            for (const auto& c : found)
                self.m_counts.emplace_back(QString::fromStdString(c.rule), int(c.steps));
            self.rebuild();
        });
}

void StepsMenu::askPattern(const QString& kind)
{
    bool ok = false;
    const QString label = kind == QStringLiteral("nvtx")
        ? tr("Regular expression for the NVTX / record_function ranges that are steps:")
        : tr("Regular expression for the kernel that starts each step:");
    const QString pattern = QInputDialog::getText(parentWidget(), tr("Step rule"), label, QLineEdit::Normal, {}, &ok);
    if (!ok || pattern.isEmpty())
        return;
    const QString rule = kind + QLatin1Char(':') + pattern;
    if (!StepRule::parse(rule.toStdString()))
        return;
    emit ruleChosen(rule);
}
