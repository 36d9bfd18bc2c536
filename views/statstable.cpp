// SPDX-License-Identifier: MIT
#include "views/statstable.h"

#include "views/csvexport.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QMenu>
#include <QSortFilterProxyModel>
#include <QTableView>
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
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_view, &QTableView::customContextMenuRequested, this, [this](const QPoint& pos) {
        QMenu menu(this);
        menu.addAction(tr("Copy selected rows as CSV"), this, [this] { copyCsv(true); });
        menu.addAction(tr("Copy all rows as CSV"), this, [this] { copyCsv(false); });
        menu.exec(m_view->viewport()->mapToGlobal(pos));
    });
    auto* copy = new QAction(this);
    copy->setShortcut(QKeySequence::Copy);
    copy->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(copy, &QAction::triggered, this, [this] { copyCsv(true); });
    addAction(copy);
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
    QList<int> rows;
    QList<int> viewRows;
    if (selectedOnly && m_view->selectionModel()) {
        for (const QModelIndex& idx : m_view->selectionModel()->selectedRows())
            viewRows << idx.row();
        std::sort(viewRows.begin(), viewRows.end());
    }
    if (viewRows.isEmpty()) {
        for (int r = 0; r < m_proxy->rowCount(); ++r)
            viewRows << r;
    }
    for (int r : viewRows)
        rows << m_proxy->mapToSource(m_proxy->index(r, 0)).row();
    return csvexport::toCsv(*m_proxy->sourceModel(), rows);
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
