// SPDX-License-Identifier: MIT
#include "kernels/simoptions.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>

namespace gapscope::kernels {

namespace {

bool toU64(const std::string& s, uint64_t& out)
{
    if (s.empty() || s[0] == '-')
        return false;
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (errno || !end || *end)
        return false;
    out = v;
    return true;
}

bool toDouble(const std::string& s, double& out)
{
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    if (errno || !end || *end || s.empty() || !std::isfinite(v))
        return false;
    out = v;
    return true;
}

// Microseconds (fractional allowed) -> nanoseconds.
bool usToNs(const std::string& s, uint64_t& out)
{
    double us = 0;
    if (!toDouble(s, us) || us < 0 || us > 1e9)
        return false;
    out = static_cast<uint64_t>(std::llround(us * 1000.0));
    return true;
}

template <typename T> bool toU32(const std::string& s, T& out)
{
    uint64_t v = 0;
    if (!toU64(s, v) || v > 0xffffffffull)
        return false;
    out = static_cast<T>(v);
    return true;
}

Status parseSlow(const std::string& v, Pathologies& p)
{
    const auto colon = v.find(':');
    double f = 0;
    if (colon == std::string::npos || !model::parseComponent(v.substr(0, colon), p.slowComponent)
        || !toDouble(v.substr(colon + 1), f) || f <= 1.0 || f > 1000.0)
        return Status::error(
            "--slow expects COMPONENT:FACTOR with FACTOR > 1, e.g. routed_experts:2 (got '" + v + "')");
    p.slow = true;
    p.slowFactor = f;
    return Status::ok();
}

using Setter = std::function<Status(const std::string&)>;

Status bad(const std::string& opt, const std::string& v, const char* what)
{
    return Status::error(opt + ": '" + v + "' is not " + what);
}

} // namespace

const char* toString(LaunchMode m)
{
    return m == LaunchMode::Eager ? "eager" : "graph";
}

json::Value Pathologies::toJson() const
{
    json::Value j = json::Value::object();
    j.set("host_delay_ns", hostDelayNs);
    j.set("host_delay_per", hostDelayScope == HostDelayScope::Layer ? "layer" : "kernel");
    j.set("host_delay_mode", hostDelayMode == HostDelayMode::Callback ? "callback" : "thread");
    j.set("sync_every_layer", syncEveryLayer);
    j.set("sync_stamps", syncStamps);
    j.set("straggler_rank", stragglerRank);
    j.set("straggler_ns", stragglerNs);
    j.set("straggler_every", stragglerEvery);
    j.set("slow_component", slow ? model::toString(slowComponent) : "");
    j.set("slow_factor", slow ? slowFactor : 1.0);
    j.set("step_gap_ns", stepGapNs);
    j.set("step_stamps", stepStamps);
    return j;
}

Expected<SimOptions> SimOptions::validate() const
{
    if (plan.tp == 0 || plan.tp > 64)
        return Status::error("--tp must be 1..64");
    if (plan.batch == 0 || plan.batch > DecodePlan::kMaxBatch)
        return Status::error("--batch must be 1.." + std::to_string(DecodePlan::kMaxBatch));
    if (plan.context == 0)
        return Status::error("--context must be at least 1");
    if (steps == 0)
        return Status::error("--steps must be at least 1");
    if (attentionSplits > kMaxAttentionSplits)
        return Status::error("--attention-splits must be 0.." + std::to_string(kMaxAttentionSplits));
    if (path.stragglerRank >= 0 && static_cast<uint32_t>(path.stragglerRank) >= plan.tp)
        return Status::error(
            "--straggler-rank " + std::to_string(path.stragglerRank) + " is not below --tp " + std::to_string(plan.tp));
    if ((path.stragglerRank >= 0) != (path.stragglerNs > 0))
        return Status::error("--straggler-rank and --straggler-us go together");
    if (path.stragglerEvery == 0)
        return Status::error("--straggler-every must be at least 1");
    if (path.hostDelayMode == HostDelayMode::Thread && path.hostDelayNs && mode == LaunchMode::Graph)
        return Status::error("--host-delay-mode thread needs --mode eager (a graph replays without the host)");
    return *this;
}

Status parsePrecisionList(const std::string& text, PlanOptions& plan)
{
    size_t pos = 0;
    while (pos <= text.size()) {
        const size_t comma = text.find(',', pos);
        const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        pos = comma == std::string::npos ? text.size() + 1 : comma + 1;
        if (item.empty())
            continue;
        const size_t eq = item.find('=');
        model::Precision p;
        if (eq == std::string::npos || !model::parsePrecision(item.substr(eq + 1), p))
            return Status::error("--precision: '" + item
                + "' is not COMPONENT=FORMAT (formats: bf16, fp16, fp8, "
                  "fp8-block128, nvfp4, mxfp4, int4-g128)");
        const std::string comp = item.substr(0, eq);
        model::Component c;
        if (comp == "all")
            plan.defaultPrecision = p;
        else if (model::parseComponent(comp, c))
            plan.precision[c] = p;
        else
            return Status::error("--precision: unknown component '" + comp + "'");
    }
    return Status::ok();
}

std::string SimOptions::usage()
{
    return R"(usage: gapscope-decode-sim [options]
Runs decode steps of a model on N GPUs (one process per GPU, NCCL) with known, injected gaps.
  --model NAME|FILE        preset from resources/models or a config.json (default glm-5)
  --tp N                   tensor-parallel ranks, one GPU each (default 1)
  --batch B                tokens per step, 1..8 (default 1)
  --context C              cached tokens per sequence (default 1024)
  --layers N               run only the first N decoder layers (default all)
  --precision LIST         COMPONENT=FORMAT,... ; all=FORMAT sets the default (bf16)
  --steps S / --warmup W   measured and warm-up steps (default 20 / 5)
  --mode eager|graph       launch kernels one by one, or replay one CUDA graph per step (default graph)
  --nvtx                   an NVTX range "decode_step <i>" around each step (and "host_delay"
                           around each spin of --host-delay-mode thread)
  --expert-pool auto|all|touched  store all routed experts, or only as many as one step touches
  --seed N                 data seed (default 1)
  --attention-splits N     KV splits of decode attention (default 0: about two blocks per SM)
  --truth FILE.json        write the ground truth: injected amounts and per-step timings
  --profile FILE.json      calibration profile: report the sum of per-kernel floors
  --ready-file FILE        rank 0 creates FILE when the measured steps begin (capture scripts wait on it)
  --no-profile-ops         skip the eager step timed op by op
  --check                  self-check every kernel against the CPU reference on small shapes
  --json                   print the summary as JSON
Pathologies (each injects a known amount, recorded in the truth file):
  --host-delay-us US       host delay before each layer (or kernel, see --host-delay-per)
  --host-delay-per layer|kernel
  --host-delay-mode callback|thread  stream-ordered host function (default), or the launching
                           thread sleeps (eager mode only)
  --sync-every-layer       cudaStreamSynchronize after every layer
  --sync-stamps            with --sync-every-layer: a one-thread kernel before and after each sync
                           writes the GPU clock, and the sync's idle is the time between them (the
                           clock of a capture's kernel timestamps) instead of between two events
  --straggler-rank R --straggler-us US [--straggler-every N]
                           rank R spins US before every N-th collective
  --slow COMPONENT:FACTOR  kernels of COMPONENT run FACTOR times as long as their work
  --step-gap-us US         host gap between steps (the host spins US after each step's sync)
  --step-stamps            a one-thread kernel after each step's last copy and another as the
                           step's first kernel (first node of its graph) write the GPU clock;
                           step_gap_idle_ns is the GPU idle between them (the clock of a capture's
                           kernel timestamps), what a capture's `step gap` bar measures
)";
}

Expected<SimOptions> SimOptions::parse(const std::vector<std::string>& args, bool* helpRequested)
{
    SimOptions o;
    Pathologies& p = o.path;
    std::map<std::string, Setter> opts;
    auto u32 = [](auto& t, const char* n) {
        return [&t, n](const std::string& v) { return toU32(v, t) ? Status::ok() : bad(n, v, "a count"); };
    };
    auto us = [](uint64_t& t, const char* n) {
        return [&t, n](const std::string& v) { return usToNs(v, t) ? Status::ok() : bad(n, v, "microseconds"); };
    };
    opts["--model"] = [&](const std::string& v) {
        o.model = v;
        return Status::ok();
    };
    opts["--tp"] = u32(o.plan.tp, "--tp");
    opts["--batch"] = u32(o.plan.batch, "--batch");
    opts["--context"] = [&](const std::string& v) {
        return toU64(v, o.plan.context) ? Status::ok() : bad("--context", v, "a count");
    };
    opts["--layers"] = u32(o.plan.layers, "--layers");
    opts["--precision"] = [&](const std::string& v) { return parsePrecisionList(v, o.plan); };
    opts["--steps"] = u32(o.steps, "--steps");
    opts["--warmup"] = u32(o.warmup, "--warmup");
    opts["--attention-splits"] = u32(o.attentionSplits, "--attention-splits");
    opts["--seed"]
        = [&](const std::string& v) { return toU64(v, o.seed) ? Status::ok() : bad("--seed", v, "a number"); };
    opts["--truth"] = [&](const std::string& v) {
        o.truthPath = v;
        return Status::ok();
    };
    opts["--ready-file"] = [&](const std::string& v) {
        o.readyFile = v;
        return Status::ok();
    };
    opts["--profile"] = [&](const std::string& v) {
        o.profilePath = v;
        return Status::ok();
    };
    opts["--mode"] = [&](const std::string& v) {
        if (v != "eager" && v != "graph")
            return bad("--mode", v, "eager or graph");
        o.mode = v == "eager" ? LaunchMode::Eager : LaunchMode::Graph;
        return Status::ok();
    };
    opts["--expert-pool"] = [&](const std::string& v) {
        if (v != "auto" && v != "all" && v != "touched")
            return bad("--expert-pool", v, "auto, all or touched");
        o.expertPool = v == "all" ? ExpertPool::All : v == "touched" ? ExpertPool::Touched : ExpertPool::Auto;
        return Status::ok();
    };
    opts["--host-delay-us"] = us(p.hostDelayNs, "--host-delay-us");
    opts["--host-delay-per"] = [&](const std::string& v) {
        if (v != "layer" && v != "kernel")
            return bad("--host-delay-per", v, "layer or kernel");
        p.hostDelayScope = v == "layer" ? HostDelayScope::Layer : HostDelayScope::Kernel;
        return Status::ok();
    };
    opts["--host-delay-mode"] = [&](const std::string& v) {
        if (v != "callback" && v != "thread")
            return bad("--host-delay-mode", v, "callback or thread");
        p.hostDelayMode = v == "callback" ? HostDelayMode::Callback : HostDelayMode::Thread;
        return Status::ok();
    };
    opts["--straggler-rank"] = [&](const std::string& v) {
        uint32_t r = 0;
        if (!toU32(v, r))
            return bad("--straggler-rank", v, "a rank");
        p.stragglerRank = static_cast<int32_t>(r);
        return Status::ok();
    };
    opts["--straggler-us"] = us(p.stragglerNs, "--straggler-us");
    opts["--straggler-every"] = u32(p.stragglerEvery, "--straggler-every");
    opts["--slow"] = [&](const std::string& v) { return parseSlow(v, p); };
    opts["--step-gap-us"] = us(p.stepGapNs, "--step-gap-us");
    std::map<std::string, bool*> flags = { { "--nvtx", &o.nvtx }, { "--check", &o.check }, { "--json", &o.json },
        { "--sync-every-layer", &p.syncEveryLayer }, { "--sync-stamps", &p.syncStamps },
        { "--step-stamps", &p.stepStamps } };

    for (size_t i = 0; i < args.size(); ++i) {
        std::string a = args[i], value;
        const bool hasEq = a.rfind("--", 0) == 0 && a.find('=') != std::string::npos;
        if (hasEq) {
            value = a.substr(a.find('=') + 1);
            a = a.substr(0, a.find('='));
        }
        if (a == "--help" || a == "-h") {
            if (helpRequested)
                *helpRequested = true;
            return Status::error(usage());
        }
        if (a == "--no-profile-ops") {
            o.profileOps = false;
            continue;
        }
        if (auto f = flags.find(a); f != flags.end() && !hasEq) {
            *f->second = true;
            continue;
        }
        auto it = opts.find(a);
        if (it == opts.end())
            return Status::error("unknown argument '" + args[i] + "' (see --help)");
        if (!hasEq) {
            if (i + 1 >= args.size())
                return Status::error(a + " needs a value");
            value = args[++i];
        }
        if (Status s = it->second(value); !s)
            return s;
    }
    return o.validate();
}

} // namespace gapscope::kernels
