// SPDX-License-Identifier: MIT
#include "views/eventcolors.h"

#include <array>

#include <unordered_map>

using namespace gapscope::model;

namespace {

struct NamedColor {
    const char* name;
    QRgb rgb;
};

// Budget components (model/budget Component names) and the analysis' gap classes.
constexpr NamedColor kColors[] = {
    { "attention", qRgb(66, 133, 244) },
    { "attention_core", qRgb(30, 136, 229) }, // the default classifier's class of attention kernels
    { "linear", qRgb(0, 137, 123) }, // the default classifier's class of dense GEMMs
    { "indexer", qRgb(121, 85, 200) },
    { "dense_ffn", qRgb(0, 150, 136) },
    { "router", qRgb(255, 179, 0) },
    { "shared_experts", qRgb(124, 179, 66) },
    { "routed_experts", qRgb(46, 125, 50) },
    { "lm_head", qRgb(171, 71, 188) },
    { "embedding", qRgb(141, 110, 99) },
    { "kv_cache", qRgb(3, 169, 244) },
    { "collectives", qRgb(239, 108, 0) },
    { "launch_host", qRgb(189, 189, 189) },
    { "sampling", qRgb(233, 30, 99) },
    { "other", qRgb(120, 144, 156) },
    { "memory ops", qRgb(0, 188, 212) },
    { "collective wait", qRgb(229, 57, 53) },
    { "launch/host gaps", qRgb(158, 158, 158) },
    { "sync stalls", qRgb(211, 47, 47) },
    { "step gap", qRgb(97, 97, 97) },
    { "unclassified kernels", qRgb(176, 190, 197) },
};

QString baseComponent(const QString& name)
{
    // "attention inefficiency" shares the colour of "attention".
    static const QString suffix = QStringLiteral(" inefficiency");
    QString n = name.toLower().trimmed();
    if (n.endsWith(suffix))
        n.chop(suffix.size());
    n.replace(QLatin1Char('-'), QLatin1Char('_'));
    return n;
}

} // namespace

QColor EventColors::componentColor(const QString& component)
{
    const QString n = baseComponent(component);
    for (const auto& c : kColors) {
        if (n == QLatin1String(c.name))
            return QColor::fromRgb(c.rgb);
    }
    if (n.startsWith(QLatin1String("launch")))
        return QColor::fromRgb(qRgb(158, 158, 158));
    if (n.startsWith(QLatin1String("collective")) || n.contains(QLatin1String("allreduce")))
        return QColor::fromRgb(qRgb(239, 108, 0));
    return hashedColor(n.toStdString());
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
        = { qRgb(66, 133, 200), qRgb(76, 160, 90), qRgb(149, 117, 205), qRgb(161, 120, 84) };
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
