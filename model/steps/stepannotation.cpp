// SPDX-License-Identifier: MIT
#include "model/steps/stepannotation.h"

#include <cctype>
#include <string>

namespace gapscope::model {
namespace {

std::string lower(std::string_view s)
{
    std::string out(s);
    for (char& c : out)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool eat(std::string_view& s, std::string_view prefix)
{
    if (s.substr(0, prefix.size()) != prefix)
        return false;
    s.remove_prefix(prefix.size());
    return true;
}

bool number(std::string_view& s, uint64_t& out)
{
    size_t i = 0;
    out = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && out < (1ull << 40))
        out = out * 10 + uint64_t(s[i++] - '0');
    s.remove_prefix(i);
    return i > 0;
}

uint32_t clamp32(uint64_t v) { return v > UINT32_MAX ? UINT32_MAX : uint32_t(v); }

// The value of "key=N" among the space-separated fields of `fields`, 0 when absent.
uint64_t field(std::string_view fields, std::string_view key)
{
    for (size_t at = 0; (at = fields.find(key, at)) != std::string_view::npos; at += key.size()) {
        if (at > 0 && fields[at - 1] != ' ')
            continue;
        std::string_view rest = fields.substr(at + key.size());
        uint64_t v = 0;
        if (eat(rest, "=") && number(rest, v))
            return v;
    }
    return 0;
}

// SGLang: step[MODE bs=N toks=T ...]
bool sglang(std::string_view s, StepAnnotation& a)
{
    if (!eat(s, "step[") || s.empty() || s.back() != ']')
        return false;
    s.remove_suffix(1);
    const size_t sp = s.find(' ');
    const std::string_view mode = s.substr(0, sp);
    const std::string_view fields = sp == std::string_view::npos ? std::string_view() : s.substr(sp);
    a.engine = "sglang";
    a.role = StepAnnotation::Role::Step;
    a.batch = clamp32(field(fields, "bs"));
    if (mode == "decode") {
        a.kind = StepKind::Decode;
        a.tokens = a.batch;
    } else if (mode == "extend" || mode == "prefill" || mode == "split_prefill" || mode == "dllm_extend") {
        a.kind = StepKind::Prefill;
        a.tokens = clamp32(field(fields, "toks"));
    } else if (mode == "mixed") {
        a.kind = StepKind::Mixed;
        a.tokens = clamp32(field(fields, "c_sq") + field(fields, "g_sq") + field(fields, "ext") + field(fields, "dec"));
    } else if (mode == "target_verify") {
        a.kind = StepKind::Verify;
    } else if (mode.substr(0, 5) == "draft") {
        a.kind = StepKind::Draft;
    } else if (mode != "idle" && mode != "prebuilt" && mode != "dummy_first") {
        return false;
    }
    return true;
}

// "N(T...)" or "N(sqT...)": requests and scheduled tokens.
bool countAndTokens(std::string_view& s, uint64_t& n, uint64_t& tokens)
{
    if (!number(s, n) || !eat(s, "("))
        return false;
    eat(s, "sq");
    if (!number(s, tokens))
        return false;
    const size_t close = s.find(')');
    if (close == std::string_view::npos)
        return false;
    s.remove_prefix(close + 1);
    return true;
}

// vLLM: execute_[T_]context_N(..)_generation_M(..) and execute_new_N_cached_M.
bool vllm(std::string_view s, StepAnnotation& a)
{
    if (!eat(s, "execute_"))
        return false;
    uint64_t n = 0, m = 0, nTok = 0, mTok = 0, total = 0;
    if (eat(s, "new_")) {
        if (!number(s, n) || !eat(s, "_cached_") || !number(s, m) || !s.empty())
            return false;
        a.kind = n == 0 ? StepKind::Decode : (m == 0 ? StepKind::Prefill : StepKind::Mixed);
    } else {
        std::string_view t = s;
        if (number(t, total) && eat(t, "_"))
            s = t;
        if (!eat(s, "context_") || !countAndTokens(s, n, nTok) || !eat(s, "_generation_")
            || !countAndTokens(s, m, mTok))
            return false;
        a.tokens = clamp32(total ? total : nTok + mTok);
        if (n > 0 && m > 0)
            a.kind = StepKind::Mixed;
        else if (n > 0)
            a.kind = StepKind::Prefill;
        else if (m > 0)
            a.kind = mTok > m ? StepKind::Verify : StepKind::Decode;
    }
    a.batch = clamp32(n + m);
    a.engine = "vllm";
    a.role = StepAnnotation::Role::Step;
    return true;
}

} // namespace

StepAnnotation StepAnnotation::parse(std::string_view name)
{
    StepAnnotation a;
    const std::string l = lower(name);
    std::string_view s = l;
    if (sglang(s, a) || vllm(s, a))
        return a;
    a = {};
    if (eat(s, "decode_step") || eat(s, "decode step")) {
        if (s.empty() || s[0] == ' ' || std::isdigit(static_cast<unsigned char>(s[0]))) {
            a.role = Role::Step;
            a.kind = StepKind::Decode;
            a.engine = "gapscope";
        }
        return a;
    }
    if (eat(s, "profilerstep#")) {
        uint64_t n = 0;
        if (number(s, n) && s.empty()) {
            a.role = Role::Enclosing;
            a.engine = "torch.profiler";
        }
    }
    return a;
}

} // namespace gapscope::model
