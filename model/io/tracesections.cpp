// SPDX-License-Identifier: MIT
// saveTraceSections and saveOverview (declared in tracefile.h): rewrite a .gapscope file with new
// sections, copying its event frames byte for byte.
#include "model/format/chunkdecoder.h"
#include "model/format/tracereader.h"
#include "model/format/tracewriter.h"
#include "model/io/overview.h"
#include "model/io/tracefile.h"
#include "model/io/tracemetaproto.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace gapscope::model {
namespace {

using format::FrameType;

// Complete dictionaries and the latest header of a file without a usable index.
Status rebuildIndex(const format::TraceReader& reader, pb::Index& index)
{
    format::ChunkDecoder decoder;
    format::ZstdDecompressor zstd;
    std::string raw;
    pb::Chunk chunk;
    for (const auto& f : reader.frames()) {
        auto type = FrameType(f.header.type);
        if (type == FrameType::Header || type == FrameType::HeaderUpdate) {
            pb::FileHeader h;
            if (reader.readMessage(f, zstd, raw, h))
                *index.mutable_header() = h;
        } else if (type == FrameType::Chunk && reader.readMessage(f, zstd, raw, chunk)) {
            (void)decoder.absorb(chunk);
        }
    }
    for (const auto& s : decoder.strings())
        index.add_strings(s);
    for (const auto& l : decoder.lanes())
        *index.add_lanes() = l;
    for (uint32_t id = 1; decoder.config(id); ++id)
        *index.add_configs() = *decoder.config(id);
    return Status::ok();
}

bool replaced(FrameType type, const pb::AnnotationSet* a, const pb::BudgetSettings* b, const pb::ClassifierTable* c)
{
    return (type == FrameType::Annotations && a) || (type == FrameType::Budget && b)
        || (type == FrameType::Classifier && c) || type == FrameType::Header || type == FrameType::Index;
}

Status copyFrames(const format::TraceReader& reader, format::TraceWriter& w, const pb::AnnotationSet* a,
    const pb::BudgetSettings* b, const pb::ClassifierTable* c, const pb::Overview* overview)
{
    std::string stored;
    for (const auto& f : reader.frames()) {
        if (replaced(FrameType(f.header.type), a, b, c))
            continue;
        if (Status s = reader.readStored(f, stored); !s)
            return s;
        const pb::IndexEntry* entry = f.indexEntry != UINT32_MAX ? &reader.index().frames(int(f.indexEntry)) : nullptr;
        if (Status s = w.copyFrame(f.header, stored, entry); !s)
            return s;
    }
    if (a)
        if (Status s = w.writeSection(FrameType::Annotations, *a); !s)
            return s;
    if (b)
        if (Status s = w.writeSection(FrameType::Budget, *b); !s)
            return s;
    if (c)
        if (Status s = w.writeSection(FrameType::Classifier, *c); !s)
            return s;
    if (overview)
        if (Status s = w.writeSection(FrameType::Overview, *overview); !s)
            return s;
    return Status::ok();
}

// Rewrites `path` through a temporary file beside it: its frames copied, the given sections replaced
// or added.
Status rewrite(const std::string& path, const pb::AnnotationSet* a, const pb::BudgetSettings* b,
    const pb::ClassifierTable* c, const pb::Overview* overview)
{
    auto reader = format::TraceReader::open(path);
    if (!reader)
        return reader.status();
    if (::access(path.c_str(), W_OK) != 0)
        return Status::error(path + ": cannot save: " + std::strerror(errno));
    pb::Index index;
    if ((*reader)->hasIndex())
        index = (*reader)->index();
    else if (Status s = rebuildIndex(**reader, index); !s)
        return s;
    if (overview) // only into a file without one (the copied frame would stay beside it)
        for (const auto& f : (*reader)->frames())
            if (FrameType(f.header.type) == FrameType::Overview)
                return Status::error(path + ": already has an overview");
    std::string tmp = path + ".saving-XXXXXX";
    int fd = ::mkstemp(tmp.data());
    if (fd < 0)
        return Status::error(path + ": cannot save (no temporary file next to it): " + std::strerror(errno));
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) // the new file keeps the old one's permissions (mkstemp gives 0600)
        (void)::fchmod(fd, st.st_mode & 07777);
    ::close(fd);
    Status result;
    {
        auto writer = format::TraceWriter::create(tmp, index.header());
        if (!writer) {
            ::unlink(tmp.c_str());
            return writer.status();
        }
        (*writer)->setDictionaries(index);
        result = copyFrames(**reader, **writer, a, b, c, overview);
        if (result)
            result = (*writer)->finish(&index.header());
    }
    if (result && std::rename(tmp.c_str(), path.c_str()) != 0)
        result = Status::error(path + ": cannot replace the file: " + std::strerror(errno));
    if (!result)
        ::unlink(tmp.c_str());
    return result;
}

} // namespace

Status saveTraceSections(const std::string& path, const AnnotationSet* annotations, const BudgetSettings* budget,
    const ClassifierTable* classifier)
{
    std::optional<pb::AnnotationSet> a;
    std::optional<pb::BudgetSettings> b;
    std::optional<pb::ClassifierTable> c;
    if (annotations)
        a = toProto(*annotations);
    if (budget)
        b = toProto(*budget);
    if (classifier)
        c = toProto(*classifier);
    return rewrite(path, a ? &*a : nullptr, b ? &*b : nullptr, c ? &*c : nullptr, nullptr);
}

Status saveOverview(const std::string& path, const TraceOverview& overview)
{
    pb::Overview frame;
    if (overview.passFrame().empty() || !frame.ParseFromString(overview.passFrame()))
        return Status::error(path + ": no overview to save (the file has one, or is incomplete or damaged)");
    return rewrite(path, nullptr, nullptr, nullptr, &frame);
}

AnnotationSet readAnnotations(const format::TraceReader& reader)
{
    format::ZstdDecompressor zstd;
    std::string raw;
    pb::AnnotationSet set, one;
    for (const auto& f : reader.frames())
        if (FrameType(f.header.type) == FrameType::Annotations && reader.readMessage(f, zstd, raw, one))
            set.Swap(&one); // the last sound one, as a full read takes it
    return fromProto(set);
}

std::string encodeSection(const AnnotationSet& annotations)
{
    return toProto(annotations).SerializeAsString();
}

std::string encodeSection(const BudgetSettings& settings)
{
    return toProto(settings).SerializeAsString();
}

Expected<AnnotationSet> decodeAnnotations(const std::string& bytes, const std::string& what)
{
    pb::AnnotationSet set;
    if (!set.ParseFromString(bytes))
        return Status::error(what + ": not an annotation set (protobuf parse failed)");
    return fromProto(set);
}

Expected<BudgetSettings> decodeBudgetSettings(const std::string& bytes, const std::string& what)
{
    pb::BudgetSettings settings;
    if (!settings.ParseFromString(bytes))
        return Status::error(what + ": not budget settings (protobuf parse failed)");
    return fromProto(settings);
}

} // namespace gapscope::model
