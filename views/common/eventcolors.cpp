// SPDX-License-Identifier: MIT
#include "views/common/eventcolors.h"

#include "model/trace/budgetcomponent.h"

#include <array>
#include <unordered_map>

using namespace gapscope::model;

namespace {

struct NamedColor {
    const char* name;
    QRgb rgb;
};

// The default classifier's classes that are no budget component (resources/classifier/default.json).
constexpr NamedColor kClassColors[] = {
    { "attention_core", qRgb(30, 136, 229) }, // attention kernels
    { "linear", qRgb(0, 137, 123) }, // dense GEMMs
};

bool findColor(const QString& name, QRgb& out)
{
    for (const auto& c : kComponents)
        if (c.rgb != kHashedColor && name == QLatin1String(c.name)) {
            out = QRgb(0xff000000u | c.rgb);
            return true;
        }
    for (const auto& c : kClassColors)
        if (name == QLatin1String(c.name)) {
            out = c.rgb;
            return true;
        }
    for (const auto& b : kBars)
        if (b.rgb != kClassColor && name == QLatin1String(b.name)) {
            out = QRgb(0xff000000u | b.rgb);
            return true;
        }
    return false;
}

QString baseComponent(const QString& name)
{
    QString n = name.toLower().trimmed();
    n.replace(QLatin1Char('-'), QLatin1Char('_'));
    return n;
}

} // namespace

QColor EventColors::componentColor(const QString& component)
{
    const QString n = baseComponent(component);
    if (QRgb rgb; findColor(n, rgb))
        return QColor::fromRgb(rgb);
    if (n.startsWith(QLatin1String("launch")))
        return QColor::fromRgb(qRgb(158, 158, 158));
    if (n.startsWith(QLatin1String("collective")) || n.contains(QLatin1String("allreduce")))
        return QColor::fromRgb(qRgb(239, 108, 0));
    return hashedColor(n.toStdString());
}

QColor EventColors::barColor(BarId bar, const QString& className)
{
    const BarInfo& b = barInfo(bar);
    if (isClassBar(bar) || b.rgb == kClassColor)
        return componentColor(className);
    return QColor::fromRgb(QRgb(0xff000000u | b.rgb));
}

QColor EventColors::hashedColor(std::string_view name)
{
    // FNV-1a: stable across runs and platforms (qHash is seeded).
    uint32_t h = 2166136261u;
    for (char c : name)
        h = (h ^ uint8_t(c)) * 16777619u;
    return QColor::fromHsv(int(h % 360), 70 + int((h >> 9) % 50), 170 + int((h >> 17) % 50));
}

QColor EventColors::hostKindColor(HostKind kind)
{
    // One colour per HostKind, in its order: a new kind fails to compile until it has one.
    static const QRgb kKindColors[]
        = { qRgb(66, 133, 200), qRgb(76, 160, 90), qRgb(149, 117, 205), qRgb(161, 120, 84), qRgb(150, 150, 150) };
    static_assert(sizeof(kKindColors) / sizeof(kKindColors[0]) == kHostKinds, "one colour per HostKind");
    return QColor::fromRgb(kKindColors[size_t(kind) < kHostKinds ? size_t(kind) : 0]);
}

QRgb EventColors::hostColor(HostKind kind, StringId name)
{
    static const auto table = [] {
        std::array<std::array<QRgb, 8>, kHostKinds> t {};
        for (size_t k = 0; k < kHostKinds; ++k)
            for (size_t s = 0; s < 8; ++s)
                t[k][s] = hostKindColor(HostKind(k)).lighter(100 + int(s) * 9).rgb();
        return t;
    }();
    const size_t shade = (uint32_t(name) * 2654435761u) >> 29; // Knuth's multiplicative hash, 3 bits
    return table[size_t(kind) < kHostKinds ? size_t(kind) : 0][shade];
}

void EventColors::build(const Trace& trace, const Classifier& classify)
{
    const size_t n = trace.stringCount();
    m_colors.assign(n, m_fallback);
    m_component.assign(n, -1);
    m_components.clear();
    std::unordered_map<std::string, int16_t> index;
    for (StringId id = 1; id < n; ++id) {
        const std::string_view name = trace.str(id);
        const std::string comp = classify ? classify(name) : std::string();
        if (comp.empty()) {
            m_colors[id] = hashedColor(name).rgb();
            continue;
        }
        auto [it, inserted] = index.emplace(comp, int16_t(m_components.size()));
        if (inserted)
            m_components.push_back(QString::fromStdString(comp));
        m_component[id] = it->second;
        m_colors[id] = componentColor(QString::fromStdString(comp)).rgb();
    }
}
