// What every part of the shim shares: the error type thrown inside it, the
// one guard per exported function, the warnings list and fd I/O.
#ifndef HOTFOLDER_IMAGESHIM_COMMON_HPP
#define HOTFOLDER_IMAGESHIM_COMMON_HPP

#include "ImageShim.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <utility>
#include <vector>

struct hi_warnings {
    // A damaged file can produce thousands of messages; a log needs the first
    // few and a count.
    static constexpr size_t kLimit = 50;
    std::vector<std::string> items;
    size_t suppressed = 0;

    void add(std::string message) {
        if (items.size() < kLimit) {
            items.push_back(std::move(message));
        } else {
            ++suppressed;
        }
    }
};

namespace hishim {

// Thrown inside the shim only; the guard turns it into an hi_error.
class Failure : public std::exception {
public:
    Failure(int status, std::string message, int sys_errno = 0)
        : status_(status), errno_(sys_errno), message_(std::move(message)) {}
    const char *what() const noexcept override { return message_.c_str(); }
    int status() const noexcept { return status_; }
    int sys_errno() const noexcept { return errno_; }

private:
    int status_;
    int errno_;
    std::string message_;
};

[[noreturn]] inline void fail(int status, std::string const &message, int sys_errno = 0) {
    throw Failure(status, message, sys_errno);
}

inline void set_error(hi_error *err, int status, int sys_errno, std::string const &message) noexcept {
    if (!err) {
        return;
    }
    err->status = status;
    err->sys_errno = sys_errno;
    std::snprintf(err->message, sizeof(err->message), "%s", message.c_str());
}

// One guard per exported function: every exception becomes an hi_error whose
// message names the file.
template <typename R, typename F>
R guarded(hi_error *err, const char *description, R failure, F &&body) noexcept {
    set_error(err, HI_OK, 0, "");
    const char *file = description ? description : "(no name)";
    try {
        return body();
    } catch (Failure &e) {
        set_error(err, e.status(), e.sys_errno(), e.what());
    } catch (std::bad_alloc &) {
        set_error(err, HI_E_INTERNAL, ENOMEM, std::string(file) + ": out of memory");
    } catch (std::exception &e) {
        set_error(err, HI_E_INTERNAL, 0, std::string(file) + ": " + e.what());
    } catch (...) {
        set_error(err, HI_E_INTERNAL, 0, std::string(file) + ": unknown exception in the image engine");
    }
    return failure;
}

// poppler and libtiff report through process-wide callbacks. Each callback
// hands the message to the list of the job running on its own thread, so
// concurrent jobs neither mix their messages nor print to stderr.
class CollectWarnings {
public:
    explicit CollectWarnings(hi_warnings *into) noexcept;
    ~CollectWarnings();
    CollectWarnings(CollectWarnings const &) = delete;
    CollectWarnings &operator=(CollectWarnings const &) = delete;

    // Adds to the current thread's list, if any; never throws (called from C).
    static void note(std::string const &prefix, const char *message) noexcept;

private:
    hi_warnings *previous_;
};

// Installs the process-wide poppler and libtiff handlers once.
void install_message_handlers() noexcept;

// The description for messages; never empty.
std::string file_name(const char *description);

// The whole file, from offset 0 when fd is seekable; fails with
// HI_E_TOO_LARGE beyond limit bytes.
std::vector<uint8_t> read_all(int fd, const char *description, size_t limit);

// Writes everything, retrying short writes and EINTR; returns 0 or an errno.
int write_all(int fd, const void *data, size_t length) noexcept;

} // namespace hishim

#endif
