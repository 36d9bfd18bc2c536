// SPDX-License-Identifier: MIT
#include "app/gui/helpmenu.h"

#include "model/base/memoryuse.h"
#include "views/document/tracedocument.h"
#include "views/document/workspace.h"

#include <QApplication>
#include <QMessageBox>

HelpMenu::HelpMenu(Workspace* workspace, QWidget* parent)
    : QMenu(tr("&Help"), parent)
    , m_workspace(workspace)
{
    addAction(tr("&Mouse and keys"), this, &HelpMenu::showShortcuts);
    addAction(tr("&About gapscope"), this, &HelpMenu::showAbout);
}

void HelpMenu::showShortcuts()
{
    QMessageBox::information(parentWidget(), tr("Mouse and keys"),
        tr("<table>"
           "<tr><td>wheel</td><td>zoom around the cursor</td></tr>"
           "<tr><td>shift + wheel</td><td>scroll the lanes</td></tr>"
           "<tr><td>left drag</td><td>pan</td></tr>"
           "<tr><td>shift + left drag, right drag, drag on the ruler</td><td>select a time range</td></tr>"
           "<tr><td>click</td><td>select an event (details pane)</td></tr>"
           "<tr><td>double-click</td><td>zoom to the event</td></tr>"
           "<tr><td>W / S, A / D</td><td>zoom in / out, pan left / right</td></tr>"
           "<tr><td>Ctrl+F, Enter, Shift+Enter</td><td>search, next, previous</td></tr>"
           "<tr><td>click a rank header</td><td>collapse / expand the rank</td></tr>"
           "<tr><td>click a rank's \"CPU threads\" row</td><td>open / close its CPU thread flames</td></tr>"
           "<tr><td>right click</td><td>annotate, zoom to the selection</td></tr>"
           "<tr><td>click a waterfall bar</td><td>light up its kernels and gaps</td></tr>"
           "<tr><td>Esc</td><td>clear the selection and the highlight</td></tr></table>"));
}

void HelpMenu::showAbout()
{
    QMessageBox::about(parentWidget(), tr("About gapscope"),
        tr("<b>gapscope %1</b><p>Where the time of an LLM decode step goes: per-GPU timelines beside "
           "the theoretical budget's waterfall.</p><p>%2</p>")
            .arg(QApplication::applicationVersion(), memoryText()));
}

QString HelpMenu::memoryText() const
{
    const auto mb = [](uint64_t bytes) { return QString::number(double(bytes) / double(1 << 20), 'f', 0); };
    QString text = tr("Memory: %1 MB resident (peak %2 MB).")
                       .arg(mb(gapscope::model::residentBytes()), mb(gapscope::model::peakResidentBytes()));
    const TraceDocument* doc = m_workspace->document();
    if (doc && doc->large())
        text += tr("<br>Large trace: %L1 events; the overview %2 MB, the events read (a window) %3 MB of a "
                   "%4 MB cache (Preferences: viewer/cacheMb, or --cache-mb).")
                    .arg(doc->overview->eventCount())
                    .arg(mb(doc->overview->memoryBytes()), mb(doc->trace->memoryBytes()),
                        mb(TraceDocument::cacheBytes()));
    else if (doc && doc->trace)
        text
            += tr("<br>The trace: %L1 events, %2 MB.").arg(doc->trace->eventCount()).arg(mb(doc->trace->memoryBytes()));
    return text;
}
