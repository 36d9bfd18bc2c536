// SPDX-License-Identifier: MIT
#include "kernels/rankgroup.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace gapscope::kernels {

namespace {

bool writeAll(int fd, const void* p, size_t n)
{
    const char* c = static_cast<const char*>(p);
    while (n > 0) {
        const ssize_t w = ::write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        c += w;
        n -= static_cast<size_t>(w);
    }
    return true;
}

bool readAll(int fd, void* p, size_t n)
{
    char* c = static_cast<char*>(p);
    while (n > 0) {
        const ssize_t r = ::read(fd, c, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        c += r;
        n -= static_cast<size_t>(r);
    }
    return true;
}

std::string slurp(const std::string& path)
{
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

[[noreturn]] void childMain(
    uint32_t rank, uint32_t ranks, int toParent, int fromParent, const std::string& dir, const RankGroup::RankMain& fn)
{
    // Name the rank the way torchrun does, before anything touches CUDA: tools loaded into the
    // process (CUPTI injection, NCCL plugins) read these.
    ::setenv("RANK", std::to_string(rank).c_str(), 1);
    ::setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
    ::setenv("WORLD_SIZE", std::to_string(ranks).c_str(), 1);
    ::setenv("LOCAL_WORLD_SIZE", std::to_string(ranks).c_str(), 1);
    ncclUniqueId id;
    std::memset(&id, 0, sizeof(id));
    Status st = Status::ok();
    if (ranks > 1 && rank == 0) {
        const ncclResult_t r = ncclGetUniqueId(&id);
        if (r != ncclSuccess)
            st = Status::error(std::string("ncclGetUniqueId: ") + ncclGetErrorString(r));
        else if (!writeAll(toParent, &id, sizeof(id)))
            st = Status::error("could not pass the NCCL id to the parent");
    } else if (ranks > 1 && !readAll(fromParent, &id, sizeof(id))) {
        st = Status::error("did not receive the NCCL id");
    }
    json::Value result;
    if (st)
        st = fn(rank, id, result);
    const std::string base = dir + "/rank" + std::to_string(rank);
    if (st)
        std::ofstream(base + ".json") << json::write(result, -1);
    else
        std::ofstream(base + ".err") << st.message();
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(st ? 0 : 1);
}

void stopAll(const std::vector<pid_t>& pids, const std::vector<bool>& done)
{
    for (size_t i = 0; i < pids.size(); ++i)
        if (!done[i] && pids[i] > 0)
            ::kill(pids[i], SIGTERM);
    for (int t = 0; t < 50; ++t) { // up to 5 s, then force
        bool any = false;
        for (size_t i = 0; i < pids.size(); ++i)
            if (!done[i] && pids[i] > 0 && ::waitpid(pids[i], nullptr, WNOHANG) == 0)
                any = true;
        if (!any)
            return;
        ::usleep(100000);
    }
    for (size_t i = 0; i < pids.size(); ++i)
        if (!done[i] && pids[i] > 0) {
            ::kill(pids[i], SIGKILL);
            ::waitpid(pids[i], nullptr, 0);
        }
}

} // namespace

Expected<std::vector<json::Value>> RankGroup::run(uint32_t ranks, const RankMain& fn)
{
    char tmpl[] = "/tmp/gapscope-ranks-XXXXXX";
    if (!::mkdtemp(tmpl))
        return Status::error(std::string("mkdtemp: ") + std::strerror(errno));
    const std::string dir = tmpl;
    int up[2];
    if (::pipe(up) != 0)
        return Status::error(std::string("pipe: ") + std::strerror(errno));
    std::vector<int> down(ranks, -1);
    std::vector<pid_t> pids(ranks, -1);
    std::vector<bool> done(ranks, false);
    std::fflush(stdout);
    std::fflush(stderr);
    for (uint32_t r = 0; r < ranks; ++r) {
        int p[2] = { -1, -1 };
        if (r > 0 && ::pipe(p) != 0)
            return Status::error(std::string("pipe: ") + std::strerror(errno));
        const pid_t pid = ::fork();
        if (pid < 0) {
            stopAll(pids, done);
            return Status::error(std::string("fork: ") + std::strerror(errno));
        }
        if (pid == 0) {
            ::close(up[0]);
            if (p[1] >= 0)
                ::close(p[1]);
            childMain(r, ranks, up[1], p[0], dir, fn);
        }
        pids[r] = pid;
        if (r > 0) {
            ::close(p[0]);
            down[r] = p[1];
        }
    }
    ::close(up[1]);
    if (ranks > 1) {
        ncclUniqueId id;
        const bool ok = readAll(up[0], &id, sizeof(id));
        for (uint32_t r = 1; r < ranks; ++r) {
            if (ok)
                writeAll(down[r], &id, sizeof(id));
            ::close(down[r]);
        }
    }
    ::close(up[0]);
    std::string failure;
    for (uint32_t left = ranks; left > 0; --left) {
        int status = 0;
        const pid_t pid = ::waitpid(-1, &status, 0);
        if (pid < 0)
            break;
        for (uint32_t r = 0; r < ranks; ++r)
            if (pids[r] == pid) {
                done[r] = true;
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                    std::string why = slurp(dir + "/rank" + std::to_string(r) + ".err");
                    if (why.empty())
                        why = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                                  : "exit code " + std::to_string(WEXITSTATUS(status));
                    if (failure.empty())
                        failure = "rank " + std::to_string(r) + ": " + why;
                    stopAll(pids, done);
                    std::fill(done.begin(), done.end(), true);
                }
            }
    }
    std::vector<json::Value> results;
    for (uint32_t r = 0; r < ranks && failure.empty(); ++r) {
        auto v = json::parseFile(dir + "/rank" + std::to_string(r) + ".json");
        if (!v)
            failure = "rank " + std::to_string(r) + ": " + v.error();
        else
            results.push_back(std::move(*v));
    }
    for (uint32_t r = 0; r < ranks; ++r) {
        std::remove((dir + "/rank" + std::to_string(r) + ".json").c_str());
        std::remove((dir + "/rank" + std::to_string(r) + ".err").c_str());
    }
    ::rmdir(dir.c_str());
    if (!failure.empty())
        return Status::error(failure);
    return results;
}

} // namespace gapscope::kernels
