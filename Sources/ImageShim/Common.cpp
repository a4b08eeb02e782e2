#include "Common.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sys/stat.h>
#include <unistd.h>

#include <poppler/cpp/poppler-global.h>
#include <tiffio.h>

namespace hishim {

namespace {

thread_local hi_warnings *current_warnings = nullptr;

void poppler_message(std::string const &message, void *) {
    CollectWarnings::note("poppler: ", message.c_str());
}

void tiff_message(const char *module, const char *format, va_list arguments) {
    char text[1024];
    std::vsnprintf(text, sizeof(text), format, arguments);
    CollectWarnings::note(module ? std::string("libtiff: ") + module + ": " : std::string("libtiff: "), text);
}

std::once_flag handlers_installed;

} // namespace

CollectWarnings::CollectWarnings(hi_warnings *into) noexcept : previous_(current_warnings) {
    current_warnings = into;
}

CollectWarnings::~CollectWarnings() {
    current_warnings = previous_;
}

void CollectWarnings::note(std::string const &prefix, const char *message) noexcept {
    try {
        if (current_warnings && message) {
            std::string text = prefix + message;
            while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
                text.pop_back();
            }
            current_warnings->add(text);
        }
    } catch (...) {
        // Out of memory while noting a warning: the warning is lost, the job is not.
    }
}

void install_message_handlers() noexcept {
    try {
        std::call_once(handlers_installed, [] {
            poppler::set_debug_error_function(poppler_message, nullptr);
            TIFFSetWarningHandler(tiff_message);
            TIFFSetErrorHandler(tiff_message);
        });
    } catch (...) {
        // call_once only throws when threads are unavailable; stderr output is then the cost.
    }
}

std::string file_name(const char *description) {
    return description && *description ? std::string(description) : std::string("(no name)");
}

std::vector<uint8_t> read_all(int fd, const char *description, size_t limit) {
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        fail(HI_E_SYSTEM, file_name(description) + ": cannot read: " + std::strerror(e), e);
    }
    bool seekable = S_ISREG(st.st_mode);
    if (seekable && static_cast<uint64_t>(st.st_size) > limit) {
        fail(HI_E_TOO_LARGE, file_name(description) + ": the file is too large (" + std::to_string(st.st_size >> 20) +
                                 " MiB; the limit is " + std::to_string(limit >> 20) + " MiB)");
    }
    std::vector<uint8_t> data(seekable ? static_cast<size_t>(st.st_size) : size_t(1) << 20);
    size_t filled = 0;
    for (;;) {
        if (filled == data.size()) {
            if (data.size() >= limit) {
                // One byte more would tell whether the file ends here.
                uint8_t probe = 0;
                ssize_t n = seekable ? pread(fd, &probe, 1, static_cast<off_t>(filled)) : ::read(fd, &probe, 1);
                if (n > 0) {
                    fail(HI_E_TOO_LARGE, file_name(description) + ": the file is too large (the limit is " +
                                             std::to_string(limit >> 20) + " MiB)");
                }
                break;
            }
            data.resize(std::min(limit, data.size() < (1u << 20) ? size_t(1) << 20 : data.size() * 2));
        }
        ssize_t n = seekable ? pread(fd, data.data() + filled, data.size() - filled, static_cast<off_t>(filled))
                             : ::read(fd, data.data() + filled, data.size() - filled);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            int e = errno;
            fail(HI_E_SYSTEM, file_name(description) + ": cannot read: " + std::strerror(e), e);
        }
        if (n == 0) {
            break;
        }
        filled += static_cast<size_t>(n);
    }
    data.resize(filled);
    return data;
}

int write_all(int fd, const void *data, size_t length) noexcept {
    const char *bytes = static_cast<const char *>(data);
    while (length > 0) {
        ssize_t n = ::write(fd, bytes, length);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return errno;
        }
        if (n == 0) {
            return EIO;
        }
        bytes += n;
        length -= static_cast<size_t>(n);
    }
    return 0;
}

} // namespace hishim

extern "C" {

hi_warnings *hi_warnings_new(void) {
    try {
        return new hi_warnings();
    } catch (...) {
        return nullptr;
    }
}

void hi_warnings_free(hi_warnings *warnings) {
    delete warnings;
}

size_t hi_warnings_count(hi_warnings *warnings) {
    try {
        if (!warnings) {
            return 0;
        }
        if (warnings->suppressed > 0) {
            std::string summary = "... and " + std::to_string(warnings->suppressed) + " more";
            warnings->suppressed = 0;
            warnings->items.push_back(summary);
        }
        return warnings->items.size();
    } catch (...) {
        return warnings ? warnings->items.size() : 0;
    }
}

const char *hi_warnings_at(hi_warnings *warnings, size_t index) {
    if (!warnings || index >= warnings->items.size()) {
        return "";
    }
    return warnings->items[index].c_str();
}

void hi_free(void *pointer) {
    std::free(pointer);
}

} // extern "C"
