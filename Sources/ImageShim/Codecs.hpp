// libpng and libjpeg report errors by longjmp. Everything that can be jumped
// over lives in Codecs.cpp and takes only plain structs: no C++ object with a
// destructor exists between a setjmp and its longjmp, and no exception can
// start there (every function here is noexcept and calls only C).
#ifndef HOTFOLDER_IMAGESHIM_CODECS_HPP
#define HOTFOLDER_IMAGESHIM_CODECS_HPP

#include <cstddef>
#include <cstdint>

namespace hishim {

// Buffered writes to a file descriptor; the first failure's errno sticks.
struct FdSink {
    int fd;
    int sys_errno;
    uint64_t written;
    size_t used;
    unsigned char buffer[1 << 16];
};

void sink_init(FdSink *sink, int fd) noexcept;
bool sink_write(FdSink *sink, const void *data, size_t length) noexcept;
bool sink_flush(FdSink *sink) noexcept;

struct CodecStatus {
    char message[512];   // the library's error, when a function returns false
    char warning[512];   // the first warning
    int warnings;
};

void status_init(CodecStatus *status) noexcept;

// Rows of 8-bit samples, `channels` (1 gray or 3 RGB) per pixel, `stride`
// bytes apart. dpi goes into pHYs / the JFIF density.
bool encode_png(FdSink *sink, const unsigned char *pixels, int width, int height, ptrdiff_t stride, int channels,
                double dpi, int level, int filters, CodecStatus *status) noexcept;
bool encode_jpeg(FdSink *sink, const unsigned char *pixels, int width, int height, ptrdiff_t stride, int channels,
                 double dpi, int quality, CodecStatus *status) noexcept;

// A decoded image: 8-bit samples, rows without padding. pixels is malloc'd
// (free it with std::free) and NULL after a header-only read.
struct Decoded {
    unsigned char *pixels;
    int width;
    int height;
    int channels;          // 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA (JPEG: 1, 3 or 4 = CMYK)
    int source_has_alpha;  // an alpha channel or a tRNS chunk
    double x_dpi;          // 0 when the file has no usable resolution
    double y_dpi;
};

void decoded_init(Decoded *image) noexcept;

// A PNG held in memory. An image of more than max_pixels is not decoded:
// the result is true with the header fields set and pixels NULL.
bool decode_png(const unsigned char *data, size_t length, bool header_only, int64_t max_pixels, Decoded *out,
                CodecStatus *status) noexcept;
// A JPEG held in memory, to gray or RGB (CMYK is converted to RGB); the
// pixel limit works as for decode_png.
bool decode_jpeg(const unsigned char *data, size_t length, int64_t max_pixels, Decoded *out,
                 CodecStatus *status) noexcept;

} // namespace hishim

#endif
