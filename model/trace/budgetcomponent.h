// SPDX-License-Identifier: MIT
#pragma once

// Component: the budget components, declared once. kComponents is the one table of their
// vocabulary: the name (used by --precision, the classifier's rules, budget output and the viewer),
// the colour the viewer gives them, what the kernel classifier may do with them and whether they
// have a number format. Everything that names, colours or lists a component reads this table.
//
// Invariant (checked at compile time): kComponents[i].id == Component(i) for every component, so a
// component added to the enum without a row fails to compile. Constant data; thread-safe.

#include "model/format/enumtable.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace gapscope::model {

enum class Component : uint8_t {
    Attention, // attention projections (MLA: q_a, q_b, kv_a, kv_b, o; GQA: q, k, v, o)
    Indexer, // DSA indexer projections
    DenseFfn,
    Router,
    SharedExperts,
    RoutedExperts,
    LmHead,
    Embedding,
    KvCache, // not a weight; its format is the KV cache's
    Collectives,
    LaunchHost,
    Sampling,
    Other,
    Draft, // speculative decoding: the draft (MTP) passes of a step
};
inline constexpr size_t kComponentCount = 14;

// What the kernel classifier may do with a component.
enum class ComponentRole : uint8_t {
    Kernels, // time of kernels: a classifier class may hold it
    HostIdle, // GPU idle time the host costs (the launch floor): never a kernel class
};

inline constexpr uint32_t kHashedColor = 0xffffffff; // no colour of its own: one hashed from the name

struct ComponentInfo {
    Component id;
    const char* name;
    uint32_t rgb; // 0xRRGGBB, or kHashedColor
    ComponentRole role;
    bool hasPrecision; // --precision accepts it (weights, and the KV cache)
};

inline constexpr ComponentInfo kComponents[] = {
    { Component::Attention, "attention", 0x4285f4, ComponentRole::Kernels, true },
    { Component::Indexer, "indexer", 0x7955c8, ComponentRole::Kernels, true },
    { Component::DenseFfn, "dense_ffn", 0x009688, ComponentRole::Kernels, true },
    { Component::Router, "router", 0xffb300, ComponentRole::Kernels, true },
    { Component::SharedExperts, "shared_experts", 0x7cb342, ComponentRole::Kernels, true },
    { Component::RoutedExperts, "routed_experts", 0x2e7d32, ComponentRole::Kernels, true },
    { Component::LmHead, "lm_head", 0xab47bc, ComponentRole::Kernels, true },
    { Component::Embedding, "embedding", 0x8d6e63, ComponentRole::Kernels, true },
    { Component::KvCache, "kv_cache", 0x03a9f4, ComponentRole::Kernels, true },
    { Component::Collectives, "collectives", 0xef6c00, ComponentRole::Kernels, false },
    { Component::LaunchHost, "launch_host", 0xbdbdbd, ComponentRole::HostIdle, false },
    { Component::Sampling, "sampling", 0xe91e63, ComponentRole::Kernels, false },
    { Component::Other, "other", 0x78909c, ComponentRole::Kernels, false },
    { Component::Draft, "draft", kHashedColor, ComponentRole::Kernels, false },
};

static_assert(rowsFollowEnum(kComponents, kComponentCount), "kComponents: one row per Component, in enum order");

inline const ComponentInfo& componentInfo(Component c)
{
    return kComponents[size_t(c)];
}
const char* toString(Component c);
bool parseComponent(const std::string& s, Component& out);
// "attention, indexer, ..., kv_cache": the components --precision accepts, for messages.
std::string precisionComponentList();

} // namespace gapscope::model
