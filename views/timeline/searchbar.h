// SPDX-License-Identifier: MIT
#pragma once

// SearchBar: the Ctrl+F bar of the timeline: a text field (substring of the full kernel / range
// name, case-insensitive), next / previous (Enter, Shift+Enter, F3) and the number of names that
// match. Esc hides it and clears the matches.
//
// Threading: GUI thread.

#include <QWidget>

class QLabel;
class QLineEdit;
class TimelineWidget;

class SearchBar : public QWidget {
    Q_OBJECT
public:
    explicit SearchBar(TimelineWidget* timeline, QWidget* parent = nullptr);

    QLineEdit* field() const { return m_field; }
    void activate(); // show, focus, select the text
    void next();
    void previous();

protected:
    void keyPressEvent(QKeyEvent* e) override;
    bool eventFilter(QObject* watched, QEvent* e) override;

private:
    void search(const QString& text);
    TimelineWidget* m_timeline;
    QLineEdit* m_field;
    QLabel* m_count;
};
