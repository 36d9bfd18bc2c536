// SPDX-License-Identifier: MIT
#include "views/timeline/searchbar.h"

#include "views/timeline/timelinewidget.h"

#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QToolButton>

SearchBar::SearchBar(TimelineWidget* timeline, QWidget* parent)
    : QWidget(parent)
    , m_timeline(timeline)
    , m_field(new QLineEdit)
    , m_count(new QLabel)
{
    m_field->setPlaceholderText(tr("Search kernels and ranges by name"));
    m_field->setClearButtonEnabled(true);
    auto* prev = new QToolButton;
    prev->setText(QStringLiteral("▲"));
    prev->setToolTip(tr("Previous match (Shift+Enter)"));
    auto* nextButton = new QToolButton;
    nextButton->setText(QStringLiteral("▼"));
    nextButton->setToolTip(tr("Next match (Enter, F3)"));
    auto* close = new QToolButton;
    close->setText(QStringLiteral("✕"));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(4, 2, 4, 2);
    layout->addWidget(new QLabel(tr("Find:")));
    layout->addWidget(m_field, 1);
    layout->addWidget(prev);
    layout->addWidget(nextButton);
    layout->addWidget(m_count);
    layout->addWidget(close);
    connect(m_field, &QLineEdit::textChanged, this, &SearchBar::search);
    m_field->installEventFilter(this); // Enter / Shift+Enter / F3 / Esc while typing
    connect(prev, &QToolButton::clicked, this, &SearchBar::previous);
    connect(nextButton, &QToolButton::clicked, this, &SearchBar::next);
    connect(close, &QToolButton::clicked, this, [this] {
        m_field->clear();
        hide();
        m_timeline->setFocus();
    });
}

void SearchBar::activate()
{
    show();
    m_field->setFocus();
    m_field->selectAll();
}

void SearchBar::search(const QString& text)
{
    const int names = m_timeline->setSearch(text);
    m_count->setText(text.isEmpty() ? QString() : tr("%n name(s)", nullptr, names));
}

void SearchBar::next()
{
    if (!m_timeline->findNext(false))
        m_count->setText(tr("no further match"));
}

void SearchBar::previous()
{
    if (!m_timeline->findNext(true))
        m_count->setText(tr("no earlier match"));
}

bool SearchBar::eventFilter(QObject* watched, QEvent* e)
{
    if (watched == m_field && e->type() == QEvent::KeyPress) {
        auto* k = static_cast<QKeyEvent*>(e);
        if (k->key() == Qt::Key_Return || k->key() == Qt::Key_Enter || k->key() == Qt::Key_F3
            || k->key() == Qt::Key_Escape) {
            keyPressEvent(k);
            return true;
        }
    }
    return QWidget::eventFilter(watched, e);
}

void SearchBar::keyPressEvent(QKeyEvent* e)
{
    if (e->key() == Qt::Key_Escape) {
        m_field->clear();
        hide();
        m_timeline->setFocus();
        return;
    }
    if (e->key() == Qt::Key_Return || e->key() == Qt::Key_Enter) {
        (e->modifiers() & Qt::ShiftModifier) ? previous() : next();
        return;
    }
    if (e->key() == Qt::Key_F3) {
        (e->modifiers() & Qt::ShiftModifier) ? previous() : next();
        return;
    }
    QWidget::keyPressEvent(e);
}
