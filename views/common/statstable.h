// SPDX-License-Identifier: MIT
#pragma once

// StatsTable: a table view with a filter box, numeric sorting (through a QSortFilterProxyModel on
// Qt::UserRole) and "Copy as CSV" (Ctrl+C copies the selected rows, or all rows when none is
// selected; the context menu offers both, and "Save as CSV…"). Columns are sized to their content
// whenever the rows change or the table is resized; the name column (setNameColumn) gets the room
// that is left and is never narrower than another column. Long text elides in the middle. Used for the kernel,
// component, step and bar-member tables. Emits rowActivated with the source-model row on double-click / Enter. The
// filter matches the filter column's FilterRole where the model answers it (a kernel's short and full name), else its
// display text.
//
// Threading: GUI thread.

#include <QWidget>

class QAbstractItemModel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

class StatsTable : public QWidget {
    Q_OBJECT
public:
    // Item data role a model may answer with all the text the filter should match in a cell.
    static constexpr int FilterRole = Qt::UserRole + 1;

    explicit StatsTable(QAbstractItemModel* model, int filterColumn, QWidget* parent = nullptr);

    QTableView* view() const { return m_view; }
    QSortFilterProxyModel* proxy() const { return m_proxy; }
    QLineEdit* filter() const { return m_filter; }
    // CSV of the selected rows (all rows when none is selected), in view order.
    QString csv(bool selectedOnly) const;
    void copyCsv(bool selectedOnly) const;
    // Selects the source rows `rows` (e.g. steps in a histogram bin).
    void selectSourceRows(const QList<int>& rows);
    // The column that takes the room left by the others (-1: none; the last column stretches).
    void setNameColumn(int column);
    int nameColumn() const { return m_nameColumn; }
    // Sizes the columns now (it also happens by itself after the rows change and on resize).
    void fitColumns();

signals:
    void rowActivated(int sourceRow);

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void scheduleFit();

    QTableView* m_view;
    QSortFilterProxyModel* m_proxy;
    QLineEdit* m_filter;
    int m_nameColumn = -1;
    bool m_fitPending = false;
};
