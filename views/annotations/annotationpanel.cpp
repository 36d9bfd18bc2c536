// SPDX-License-Identifier: MIT
#include "views/annotations/annotationpanel.h"

#include "views/annotations/annotationmodel.h"
#include "views/common/statstable.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

AnnotationPanel::AnnotationPanel(AnnotationModel* model, QWidget* parent)
    : QWidget(parent)
    , m_model(model)
    , m_table(new StatsTable(model, AnnotationModel::Text))
{
    m_table->view()->setEditTriggers(QAbstractItemView::EditKeyPressed | QAbstractItemView::SelectedClicked);
    m_table->setNameColumn(AnnotationModel::Text);
    auto* edit = new QPushButton(tr("Edit…"));
    auto* remove = new QPushButton(tr("Delete"));
    auto* save = new QPushButton(tr("Save"));
    save->setToolTip(tr("Save the notes into the trace file (or FILE.annotations beside a read-only trace)"));
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(edit);
    buttons->addWidget(remove);
    buttons->addStretch(1);
    buttons->addWidget(save);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_table, 1);
    layout->addLayout(buttons);
    connect(m_table, &StatsTable::rowActivated, this, &AnnotationPanel::jumpRequested);
    connect(edit, &QPushButton::clicked, this, [this] {
        if (currentRow() >= 0)
            emit editRequested(currentRow());
    });
    connect(remove, &QPushButton::clicked, this, [this] {
        if (currentRow() >= 0)
            emit deleteRequested(currentRow());
    });
    connect(save, &QPushButton::clicked, this, &AnnotationPanel::saveRequested);
}

int AnnotationPanel::currentRow() const
{
    const QModelIndex idx = m_table->view()->currentIndex();
    return idx.isValid() ? m_table->proxy()->mapToSource(idx).row() : -1;
}
