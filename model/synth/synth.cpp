// SPDX-License-Identifier: MIT
#include "model/synth/synth.h"

#include "model/io/eventfilewriter.h"
#include "model/synth/synthgenerator.h"

namespace gapscope::model {

Status validate(const SynthOptions& o)
{
    auto bad = [](const std::string& what) { return Status::error("synth: " + what); };
    if (o.ranks == 0 || o.ranks > 4096)
        return bad("--ranks must be 1..4096");
    if (o.steps == 0)
        return bad("--steps must be at least 1");
    if (o.kernelsPerStep < 8 || o.kernelsPerStep > 1000000)
        return bad("--kernels-per-step must be 8..1000000");
    if (uint64_t(o.ranks) * o.steps * o.kernelsPerStep > 4000000000ull)
        return bad("more than 4e9 kernels requested");
    if (o.jitter < 0 || o.jitter > 0.3)
        return bad("--jitter must be 0..0.3");
    if (o.hostGapUs < 0 || o.extraHostGapUs < 0 || o.launchGapUs < 0 || o.syncStallUs < 0 || o.stragglerDelayUs < 0
        || o.hostOpUs < 0)
        return bad("gaps and delays must not be negative");
    if (o.host.empty())
        return bad("--host must not be empty");
    if (uint64_t(o.firstRank) + o.ranks > 65536)
        return bad("--first-rank + --ranks must be at most 65536");
    if (o.stragglerRank >= int64_t(o.firstRank) + o.ranks)
        return bad("--straggler-rank must be below --ranks");
    if (o.stragglerRank >= 0 && o.stragglerRank < int64_t(o.firstRank))
        return bad("--straggler-rank must be one of the ranks (from --first-rank on)");
    if (o.slowFactor <= 0 || o.slowFactor > 100)
        return bad("--slow-factor must be in (0, 100]");
    if (!o.slowClass.empty()) {
        bool known = false;
        for (const auto& t : synth::allTemplates())
            known = known || o.slowClass == t.cls;
        if (!known)
            return bad("--slow-class '" + o.slowClass
                + "' is not a class synth uses (linear, attention_core, "
                  "routed_experts, collectives, sampling, embedding, other)");
    }
    return Status::ok();
}

Expected<Trace> synthesize(const SynthOptions& options, json::Value* truth)
{
    TraceBuilder builder;
    builder.header() = synth::SynthGenerator::header(options);
    auto sink = synth::builderSink(builder);
    synth::SynthGenerator gen(options, *sink, truth);
    if (Status s = gen.run(); !s)
        return s;
    return builder.finish();
}

Status synthesizeToFile(const SynthOptions& options, const std::string& path, json::Value* truth, int zstdLevel)
{
    if (Status s = validate(options); !s)
        return s;
    auto writer = EventFileWriter::create(path, synth::SynthGenerator::header(options), zstdLevel);
    if (!writer)
        return writer.status();
    auto sink = synth::writerSink(**writer);
    synth::SynthGenerator gen(options, *sink, truth);
    if (Status s = gen.run(); !s)
        return s;
    return (*writer)->finish();
}

} // namespace gapscope::model
