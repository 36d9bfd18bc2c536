// SPDX-License-Identifier: MIT
#include "views/common/statstable.h"

#include "views/common/csvexport.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QMenu>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

StatsTable::StatsTable(QAbstractItemModel* model, int filterColumn, QWidget* parent)
    : QWidget(parent)
    , m_view(new QTableView(this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_filter(new QLineEdit(this))
{
    m_proxy->setSourceModel(model);
    m_proxy->setSortRole(Qt::UserRole);
    m_proxy->setFilterKeyColumn(filterColumn);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_filter->setPlaceholderText(tr("Filter (regular expression)"));
    m_filter->setClearButtonEnabled(true);
    connect(m_filter, &QLineEdit::textChanged, this, [this, model, filterColumn](const QString& text) {
        const bool answers = model->rowCount() > 0 && model->index(0, filterColumn).data(FilterRole).isValid();
        m_proxy->setFilterRole(answers ? FilterRole : Qt::DisplayRole);
        m_proxy->setFilterRegularExpression(QRegularExpression(text, QRegularExpression::CaseInsensitiveOption));
    });
    m_view->setModel(m_proxy);
    m_view->setSortingEnabled(true);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setAlternatingRowColors(true);
    m_view->verticalHeader()->hide();
    m_view->verticalHeader()->setDefaultSectionSize(20);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->setTextElideMode(Qt::ElideMiddle);
    m_view->setWordWrap(false);
    connect(m_proxy, &QAbstractItemModel::modelReset, this, &StatsTable::scheduleFit);
    connect(m_proxy, &QAbstractItemModel::layoutChanged, this, &StatsTable::scheduleFit);
    connect(m_proxy, &QAbstractItemModel::rowsInserted, this, &StatsTable::scheduleFit);
    connect(m_proxy, &QAbstractItemModel::dataChanged, this, &StatsTable::scheduleFit);
    csvexport::addCsvActions(m_view, this);
    auto activate = [this](const QModelIndex& idx) {
        if (idx.isValid())
            emit rowActivated(m_proxy->mapToSource(idx).row());
    };
    connect(m_view, &QTableView::doubleClicked, this, activate);
    connect(m_view, &QTableView::activated, this, activate);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(m_filter);
    layout->addWidget(m_view, 1);
}

QString StatsTable::csv(bool selectedOnly) const
{
    return csvexport::viewCsv(*m_view, selectedOnly);
}

void StatsTable::setNameColumn(int column)
{
    m_nameColumn = column;
    m_view->horizontalHeader()->setStretchLastSection(column < 0);
    scheduleFit();
}

void StatsTable::scheduleFit()
{
    if (m_fitPending)
        return;
    m_fitPending = true;
    QTimer::singleShot(0, this, [this] {
        m_fitPending = false;
        fitColumns();
    });
}

void StatsTable::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    scheduleFit();
}

void StatsTable::fitColumns()
{
    // Names can be very long (lambdas in template arguments): past this the name elides in the
    // middle and shows whole on hover, instead of pushing the numbers out of sight.
    constexpr int kNameCap = 900;
    QHeaderView* header = m_view->horizontalHeader();
    int others = 0;
    int widest = 0;
    for (int c = 0; c < m_proxy->columnCount(); ++c) {
        if (c == m_nameColumn || m_view->isColumnHidden(c))
            continue;
        m_view->resizeColumnToContents(c);
        others += header->sectionSize(c);
        widest = std::max(widest, header->sectionSize(c));
    }
    if (m_nameColumn < 0 || m_nameColumn >= m_proxy->columnCount())
        return;
    const QAbstractItemView* items = m_view; // sizeHintForColumn is public there
    const int content = std::max(items->sizeHintForColumn(m_nameColumn), header->sectionSizeHint(m_nameColumn));
    const int room = m_view->viewport()->width() - others;
    m_view->setColumnWidth(m_nameColumn, std::max({ room, widest + 1, std::min(content, kNameCap) }));
}

void StatsTable::copyCsv(bool selectedOnly) const
{
    QApplication::clipboard()->setText(csv(selectedOnly));
}

void StatsTable::selectSourceRows(const QList<int>& rows)
{
    QItemSelection sel;
    for (int r : rows) {
        const QModelIndex idx = m_proxy->mapFromSource(m_proxy->sourceModel()->index(r, 0));
        if (idx.isValid())
            sel.select(idx, idx);
    }
    m_view->selectionModel()->select(sel, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    if (!sel.isEmpty())
        m_view->scrollTo(sel.indexes().first());
}
