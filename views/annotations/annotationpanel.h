// SPDX-License-Identifier: MIT
#pragma once

// AnnotationPanel: the list of notes (filterable, copyable as CSV) with Edit, Delete and Save.
// Double-clicking a note (or Enter) asks to jump to it on the timeline.
//
// Threading: GUI thread.

#include <QWidget>

class AnnotationModel;
class StatsTable;

class AnnotationPanel : public QWidget {
    Q_OBJECT
public:
    explicit AnnotationPanel(AnnotationModel* model, QWidget* parent = nullptr);
    StatsTable* table() const { return m_table; }
    int currentRow() const; // source-model row, or -1

signals:
    void jumpRequested(int row);
    void editRequested(int row);
    void deleteRequested(int row);
    void saveRequested();

private:
    AnnotationModel* m_model;
    StatsTable* m_table;
};
