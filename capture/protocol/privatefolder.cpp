// SPDX-License-Identifier: MIT
#include "capture/protocol/privatefolder.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace gapscope::capture {

std::string modeText(unsigned mode)
{
    char buf[8];
    std::snprintf(buf, sizeof buf, "%04o", mode & 07777u);
    return buf;
}

namespace {

std::vector<std::string> prefixes(const std::string& path) // "/a/b" -> "/a", "/a/b"
{
    std::vector<std::string> out;
    for (size_t pos = 1; pos <= path.size(); ++pos)
        if (pos == path.size() || path[pos] == '/')
            if (path[pos - 1] != '/')
                out.push_back(path.substr(0, pos));
    return out;
}

std::string owner(const struct stat& st)
{
    return "uid " + std::to_string(st.st_uid);
}

bool trustedOwner(const struct stat& st)
{
    return st.st_uid == ::geteuid() || st.st_uid == 0;
}

} // namespace

Status preparePrivateFolder(const std::string& dir, const std::string& purpose)
{
    if (dir.empty())
        return Status::error("empty folder name for " + purpose);
    std::string abs = dir;
    if (abs[0] != '/') {
        char cwd[PATH_MAX];
        if (!::getcwd(cwd, sizeof cwd))
            return Status::error(dir + ": " + std::strerror(errno));
        abs = std::string(cwd) + "/" + dir;
    }
    const std::string refusing = "; refusing to put " + purpose + " there";
    // The path as given: create what is missing, and no link planted by another user on the way.
    for (const std::string& p : prefixes(abs)) {
        struct stat st { };
        if (::lstat(p.c_str(), &st) != 0) {
            if (errno != ENOENT)
                return Status::error(p + ": " + std::strerror(errno));
            if (::mkdir(p.c_str(), 0700) != 0 && errno != EEXIST)
                return Status::error(p + ": cannot create the folder for " + purpose + ": " + std::strerror(errno));
            if (::lstat(p.c_str(), &st) != 0)
                return Status::error(p + ": " + std::strerror(errno));
        }
        if (S_ISLNK(st.st_mode) && !trustedOwner(st))
            return Status::error(p + ": a symbolic link owned by another user (" + owner(st) + ")" + refusing);
    }
    // The folders it really is, from the root down.
    char real[PATH_MAX];
    if (!::realpath(abs.c_str(), real))
        return Status::error(dir + ": " + std::strerror(errno));
    std::vector<std::string> chain = prefixes(real);
    if (chain.empty())
        chain.push_back("/");
    for (size_t i = 0; i < chain.size(); ++i) {
        const std::string& p = chain[i];
        const bool last = i + 1 == chain.size();
        struct stat st { };
        if (::lstat(p.c_str(), &st) != 0)
            return Status::error(p + ": " + std::strerror(errno));
        if (!S_ISDIR(st.st_mode))
            return Status::error(p + ": not a folder" + refusing);
        const std::string mode = " (mode " + modeText(st.st_mode) + ")";
        if (last && st.st_uid != ::geteuid())
            return Status::error(p + ": belongs to another user (" + owner(st) + ")" + refusing);
        if (!trustedOwner(st))
            return Status::error(p + ": belongs to another user (" + owner(st) + ")" + refusing);
        const bool othersWrite = st.st_mode & (S_IWGRP | S_IWOTH);
        if (othersWrite && (last || !(st.st_mode & S_ISVTX)))
            return Status::error(p + ": writable by other users" + mode + refusing);
    }
    return Status::ok();
}

} // namespace gapscope::capture
