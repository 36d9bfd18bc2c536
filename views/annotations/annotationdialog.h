// SPDX-License-Identifier: MIT
#pragma once

// AnnotationDialog: edits one note: text, colour, and whether it covers its lane or the whole
// trace. Times are edited by dragging the note on the timeline (or by annotating a new range).
//
// Threading: GUI thread.

#include "model/trace/tracemeta.h"

#include <QDialog>

class QCheckBox;
class QPlainTextEdit;
class QPushButton;

class AnnotationDialog : public QDialog {
    Q_OBJECT
public:
    explicit AnnotationDialog(const gapscope::model::Annotation& annotation, QWidget* parent = nullptr);
    gapscope::model::Annotation annotation() const;

private:
    void setColor(const QColor& c);
    gapscope::model::Annotation m_annotation;
    QPlainTextEdit* m_text;
    QPushButton* m_color;
    QCheckBox* m_wholeTrace;
    QColor m_current;
};
