// SPDX-License-Identifier: MIT
#include "views/annotations/annotationdialog.h"

#include "views/timeline/timelinerenderer.h"

#include <QCheckBox>
#include <QColorDialog>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QPlainTextEdit>
#include <QPushButton>

AnnotationDialog::AnnotationDialog(const gapscope::model::Annotation& annotation, QWidget* parent)
    : QDialog(parent)
    , m_annotation(annotation)
    , m_text(new QPlainTextEdit)
    , m_color(new QPushButton)
    , m_wholeTrace(new QCheckBox(tr("all lanes")))
{
    setWindowTitle(tr("Annotation"));
    m_text->setPlainText(QString::fromStdString(annotation.text));
    m_text->setTabChangesFocus(true);
    setColor(TimelineRenderer::annotationColor(annotation.colorRgba));
    connect(m_color, &QPushButton::clicked, this, [this] {
        const QColor c = QColorDialog::getColor(m_current, this, tr("Annotation colour"));
        if (c.isValid())
            setColor(c);
    });
    m_wholeTrace->setChecked(annotation.laneKey.empty());
    m_wholeTrace->setEnabled(!annotation.laneKey.empty());
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* form = new QFormLayout(this);
    form->addRow(tr("Note"), m_text);
    form->addRow(tr("Colour"), m_color);
    form->addRow(tr("Covers"), m_wholeTrace);
    form->addRow(buttons);
    m_text->setFocus();
}

void AnnotationDialog::setColor(const QColor& c)
{
    m_current = c;
    m_color->setText(c.name());
    m_color->setStyleSheet(QStringLiteral("background:%1").arg(c.name()));
}

gapscope::model::Annotation AnnotationDialog::annotation() const
{
    gapscope::model::Annotation a = m_annotation;
    a.text = m_text->toPlainText().toStdString();
    a.colorRgba = TimelineRenderer::annotationRgba(m_current);
    if (m_wholeTrace->isChecked())
        a.laneKey.clear();
    return a;
}
