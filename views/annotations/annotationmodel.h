// SPDX-License-Identifier: MIT
#pragma once

// AnnotationModel: the notes of the open trace (a model::AnnotationSet, with the step rule chosen for
// the trace, which has no row) as a table: start (relative to
// the trace start), length, lane, text, with the note colour as decoration. Text and colour are
// editable in place; add/update/move/remove keep ids stable and mark the set modified. The
// timeline draws straight from annotations() (the renderer holds a pointer to it), so every change
// emits changed() for a repaint.
//
// Threading: GUI thread (a Qt item model).

#include "model/trace/trace.h"

#include <QAbstractTableModel>
#include <QColor>

class AnnotationModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Start, Length, Lane, Text, ColumnCount };
    explicit AnnotationModel(QObject* parent = nullptr);

    // Replaces all annotations; `origin` is the trace start that times are shown relative to.
    void setAnnotations(const gapscope::model::AnnotationSet& set, gapscope::model::TimeNs origin);
    const gapscope::model::AnnotationSet& annotations() const { return m_set; }
    const gapscope::model::Annotation& at(int row) const { return m_set.notes[size_t(row)]; }
    // The step rule chosen for the trace (the Steps menu), saved with the notes; a change marks the set
    // modified. No row changes.
    void setStepRule(const std::string& rule);
    const std::string& stepRule() const { return m_set.stepRule; }

    // Adds a note and returns its row. Assigns a fresh id and the creation time when they are 0.
    int add(gapscope::model::Annotation a);
    void update(int row, const gapscope::model::Annotation& a);
    void move(int row, gapscope::model::TimeNs delta);
    void remove(int row);
    int rowOfId(uint64_t id) const;

    bool isModified() const { return m_modified; }
    void setModified(bool on) { m_modified = on; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

signals:
    void changed();

private:
    void touch(int row);
    gapscope::model::AnnotationSet m_set;
    gapscope::model::TimeNs m_origin = 0;
    bool m_modified = false;
};
