// SPDX-License-Identifier: MIT
#pragma once

// EventColors: the colour of every event name, precomputed once per trace so that painting is an
// array lookup. Names are coloured by the budget component they are classified into (the same
// classification the waterfall uses), so a bar and its kernels share a colour; names that no rule
// classifies get a muted colour derived from a hash of the name (stable across runs).
//
// Invariants: color(id) is valid for every id < stringCount of the trace passed to build().
// Threading: build() may run on a worker thread; afterwards read-only.

#include "model/analysis/barid.h"
#include "model/trace/trace.h"

#include <QColor>
#include <QString>

#include <functional>
#include <string_view>
#include <vector>

class EventColors {
public:
    // Returns the component name of an event name ("" when unclassified).
    using Classifier = std::function<std::string(std::string_view name)>;

    void build(const gapscope::model::Trace& trace, const Classifier& classify);

    QRgb color(gapscope::model::StringId id) const { return id < m_colors.size() ? m_colors[id] : m_fallback; }
    // Component index into components(), or -1.
    int component(gapscope::model::StringId id) const { return id < m_component.size() ? m_component[id] : -1; }
    const std::vector<QString>& components() const { return m_components; }

    // Stable colour of a budget component or class by name (also of the table's fixed bars).
    static QColor componentColor(const QString& component);
    // The colour of a waterfall bar: its class's for class bars, else the bar table's
    // (model/analysis/barid.h).
    static QColor barColor(gapscope::model::BarId bar, const QString& className);
    // Muted colour from a hash of a name (unclassified kernels, NVTX ranges, API calls).
    static QColor hashedColor(std::string_view name);
    // A host range on a CPU thread lane: the hue of its kind (hostKindColor), a shade from its name,
    // so neighbours in a flame tell apart. Integer arithmetic only (called per drawn item).
    static QRgb hostColor(gapscope::model::HostKind kind, gapscope::model::StringId name);
    // The hue of a kind of host range: operators blue, Python frames green, user annotations purple,
    // OS calls brown (CUDA API calls are grey and sync calls red on their own rows).
    static QColor hostKindColor(gapscope::model::HostKind kind);

private:
    std::vector<QRgb> m_colors;
    std::vector<int16_t> m_component;
    std::vector<QString> m_components;
    QRgb m_fallback = qRgb(150, 150, 150);
};
