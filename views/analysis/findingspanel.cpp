// SPDX-License-Identifier: MIT
#include "views/analysis/findingspanel.h"

#include "views/common/timeformat.h"

#include <QLabel>
#include <QListWidget>
#include <QVBoxLayout>

FindingsPanel::FindingsPanel(QWidget* parent)
    : QWidget(parent)
    , m_list(new QListWidget)
    , m_empty(new QLabel(tr("The findings appear once the analysis is built.")))
{
    m_list->setWordWrap(true);
    m_list->setAlternatingRowColors(true);
    m_list->setSelectionMode(QAbstractItemView::SingleSelection);
    m_empty->setStyleSheet(QStringLiteral("color:#607d8b"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(m_empty);
    layout->addWidget(m_list, 1);
    auto activate = [this](QListWidgetItem* item) {
        const int i = item ? m_list->row(item) : -1;
        if (i >= 0 && i < int(m_findings.size()))
            emit findingActivated(m_findings[size_t(i)]);
    };
    connect(m_list, &QListWidget::itemClicked, this, activate);
    connect(m_list, &QListWidget::itemActivated, this, activate);
}

QString FindingsPanel::where(const gapscope::model::Finding& f)
{
    QStringList parts;
    if (f.bar != gapscope::model::BarId::None)
        parts << tr("bar “%1”").arg(QString::fromStdString(f.barName));
    if (f.rank >= 0)
        parts << tr("rank %1").arg(f.rank);
    if (f.step >= 0)
        parts << tr("step %1").arg(f.step);
    if (f.t1 > f.t0)
        parts << timeformat::duration(double(f.t1 - f.t0));
    return parts.join(QStringLiteral(" · "));
}

void FindingsPanel::setFindings(std::vector<gapscope::model::Finding> findings)
{
    m_findings = std::move(findings);
    m_list->clear();
    for (const auto& f : m_findings) {
        const QString where = FindingsPanel::where(f);
        auto* item = new QListWidgetItem(
            QString::fromStdString(f.text) + (where.isEmpty() ? QString() : QStringLiteral("\n→ ") + where));
        item->setToolTip(where.isEmpty() ? QString() : tr("Click to show %1").arg(where));
        m_list->addItem(item);
    }
    m_empty->setVisible(m_findings.empty());
    if (m_findings.empty())
        m_empty->setText(tr("No findings (no decode steps, or nothing stands out)."));
}
