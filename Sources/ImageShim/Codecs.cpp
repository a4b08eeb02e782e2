// The only file with setjmp. Rules kept here (see Codecs.hpp): plain structs
// only, no exceptions, and nothing the longjmp would need is held in a local
// that changes after setjmp (the decoded buffer lives in the caller's struct).
#include "Codecs.hpp"

#include <csetjmp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include <jpeglib.h>
#include <png.h>

namespace hishim {

void sink_init(FdSink *sink, int fd) noexcept {
    sink->fd = fd;
    sink->sys_errno = 0;
    sink->written = 0;
    sink->used = 0;
}

bool sink_flush(FdSink *sink) noexcept {
    if (sink->sys_errno != 0) {
        return false;
    }
    size_t done = 0;
    while (done < sink->used) {
        ssize_t n = ::write(sink->fd, sink->buffer + done, sink->used - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            sink->sys_errno = n < 0 ? errno : EIO;
            return false;
        }
        done += static_cast<size_t>(n);
    }
    sink->written += sink->used;
    sink->used = 0;
    return true;
}

bool sink_write(FdSink *sink, const void *data, size_t length) noexcept {
    const unsigned char *bytes = static_cast<const unsigned char *>(data);
    while (length > 0) {
        if (sink->used == sizeof(sink->buffer) && !sink_flush(sink)) {
            return false;
        }
        size_t room = sizeof(sink->buffer) - sink->used;
        size_t n = length < room ? length : room;
        std::memcpy(sink->buffer + sink->used, bytes, n);
        sink->used += n;
        bytes += n;
        length -= n;
    }
    return sink->sys_errno == 0;
}

void status_init(CodecStatus *status) noexcept {
    status->message[0] = '\0';
    status->warning[0] = '\0';
    status->warnings = 0;
}

void decoded_init(Decoded *image) noexcept {
    std::memset(image, 0, sizeof(*image));
}

namespace {

void set_message(CodecStatus *status, const char *message) noexcept {
    if (status->message[0] == '\0') {
        std::snprintf(status->message, sizeof(status->message), "%s", message ? message : "unknown error");
    }
}

void add_warning(CodecStatus *status, const char *message) noexcept {
    if (status->warnings++ == 0) {
        std::snprintf(status->warning, sizeof(status->warning), "%s", message ? message : "");
    }
}

// MARK: libpng

// libpng prints and aborts unless the error function leaves by longjmp.
[[noreturn]] void png_on_error(png_structp png, png_const_charp message) {
    set_message(static_cast<CodecStatus *>(png_get_error_ptr(png)), message);
    png_longjmp(png, 1);
}

void png_on_warning(png_structp png, png_const_charp message) {
    add_warning(static_cast<CodecStatus *>(png_get_error_ptr(png)), message);
}

void png_on_write(png_structp png, png_bytep data, size_t length) {
    if (!sink_write(static_cast<FdSink *>(png_get_io_ptr(png)), data, length)) {
        png_error(png, "cannot write the output");
    }
}

// Output is flushed once, after the last row.
void png_on_flush(png_structp) {}

struct MemorySource {
    const unsigned char *data;
    size_t length;
    size_t offset;
};

void png_on_read(png_structp png, png_bytep out, size_t length) {
    MemorySource *source = static_cast<MemorySource *>(png_get_io_ptr(png));
    if (length > source->length - source->offset) {
        png_error(png, "the PNG is truncated");
    }
    std::memcpy(out, source->data + source->offset, length);
    source->offset += length;
}

// MARK: libjpeg

struct JpegError {
    jpeg_error_mgr manager;
    jmp_buf jump;
    CodecStatus *status;
};

[[noreturn]] void jpeg_on_error(j_common_ptr cinfo) {
    JpegError *error = reinterpret_cast<JpegError *>(cinfo->err);
    char text[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, text);
    set_message(error->status, text);
    std::longjmp(error->jump, 1);
}

// libjpeg's default prints warnings to stderr.
void jpeg_on_message(j_common_ptr cinfo) {
    JpegError *error = reinterpret_cast<JpegError *>(cinfo->err);
    char text[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, text);
    add_warning(error->status, text);
}

[[noreturn]] void jpeg_fail(j_common_ptr cinfo, const char *message) {
    JpegError *error = reinterpret_cast<JpegError *>(cinfo->err);
    set_message(error->status, message);
    std::longjmp(error->jump, 1);
}

struct JpegDestination {
    jpeg_destination_mgr manager;
    FdSink *sink;
};

void jpeg_destination_init(j_compress_ptr cinfo) {
    JpegDestination *destination = reinterpret_cast<JpegDestination *>(cinfo->dest);
    destination->sink->used = 0;
    destination->manager.next_output_byte = destination->sink->buffer;
    destination->manager.free_in_buffer = sizeof(destination->sink->buffer);
}

boolean jpeg_destination_empty(j_compress_ptr cinfo) {
    JpegDestination *destination = reinterpret_cast<JpegDestination *>(cinfo->dest);
    // libjpeg calls this with the whole buffer full, whatever free_in_buffer says.
    destination->sink->used = sizeof(destination->sink->buffer);
    if (!sink_flush(destination->sink)) {
        jpeg_fail(reinterpret_cast<j_common_ptr>(cinfo), "cannot write the output");
    }
    destination->manager.next_output_byte = destination->sink->buffer;
    destination->manager.free_in_buffer = sizeof(destination->sink->buffer);
    return TRUE;
}

void jpeg_destination_term(j_compress_ptr cinfo) {
    JpegDestination *destination = reinterpret_cast<JpegDestination *>(cinfo->dest);
    destination->sink->used = sizeof(destination->sink->buffer) - destination->manager.free_in_buffer;
    if (!sink_flush(destination->sink)) {
        jpeg_fail(reinterpret_cast<j_common_ptr>(cinfo), "cannot write the output");
    }
}

uint16_t density(double dpi) noexcept {
    if (!(dpi > 0)) {
        return 0;
    }
    double rounded = std::floor(dpi + 0.5);
    return rounded > 65535 ? 65535 : static_cast<uint16_t>(rounded);
}

} // namespace

bool encode_png(FdSink *sink, const unsigned char *pixels, int width, int height, ptrdiff_t stride, int channels,
                double dpi, int level, int filters, CodecStatus *status) noexcept {
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, status, png_on_error, png_on_warning);
    if (!png) {
        set_message(status, "cannot create a PNG writer (out of memory)");
        return false;
    }
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_write_struct(&png, nullptr);
        set_message(status, "cannot create a PNG writer (out of memory)");
        return false;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return false;
    }
    png_set_write_fn(png, sink, png_on_write, png_on_flush);
    png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8,
                 channels == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (dpi > 0) {
        png_uint_32 per_meter = static_cast<png_uint_32>(dpi / 0.0254 + 0.5);
        png_set_pHYs(png, info, per_meter, per_meter, PNG_RESOLUTION_METER);
    }
    png_set_compression_level(png, level);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, filters);
    png_write_info(png, info);
    for (int y = 0; y < height; ++y) {
        png_write_row(png, pixels + static_cast<ptrdiff_t>(y) * stride);
    }
    png_write_end(png, nullptr);
    png_destroy_write_struct(&png, &info);
    if (!sink_flush(sink)) {
        set_message(status, "cannot write the output");
        return false;
    }
    return true;
}

bool encode_jpeg(FdSink *sink, const unsigned char *pixels, int width, int height, ptrdiff_t stride, int channels,
                 double dpi, int quality, CodecStatus *status) noexcept {
    jpeg_compress_struct cinfo;
    std::memset(&cinfo, 0, sizeof(cinfo));
    JpegError error;
    cinfo.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = jpeg_on_error;
    error.manager.output_message = jpeg_on_message;
    error.status = status;
    JpegDestination destination;
    std::memset(&destination, 0, sizeof(destination));
    destination.sink = sink;
    if (setjmp(error.jump)) {
        jpeg_destroy_compress(&cinfo);
        return false;
    }
    jpeg_create_compress(&cinfo);
    destination.manager.init_destination = jpeg_destination_init;
    destination.manager.empty_output_buffer = jpeg_destination_empty;
    destination.manager.term_destination = jpeg_destination_term;
    cinfo.dest = &destination.manager;
    cinfo.image_width = static_cast<JDIMENSION>(width);
    cinfo.image_height = static_cast<JDIMENSION>(height);
    cinfo.input_components = channels;
    cinfo.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    uint16_t d = density(dpi);
    if (d > 0) {
        cinfo.density_unit = 1;
        cinfo.X_density = d;
        cinfo.Y_density = d;
    }
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < cinfo.image_height) {
        // libjpeg's row type is not const; it only reads the rows.
        JSAMPROW row = const_cast<JSAMPROW>(pixels + static_cast<ptrdiff_t>(cinfo.next_scanline) * stride);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    return true;
}

bool decode_png(const unsigned char *data, size_t length, bool header_only, int64_t max_pixels, Decoded *out,
                CodecStatus *status) noexcept {
    decoded_init(out);
    MemorySource source = {data, length, 0};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, status, png_on_error, png_on_warning);
    if (!png) {
        set_message(status, "cannot create a PNG reader (out of memory)");
        return false;
    }
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_read_struct(&png, nullptr, nullptr);
        set_message(status, "cannot create a PNG reader (out of memory)");
        return false;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, nullptr);
        std::free(out->pixels);
        out->pixels = nullptr;
        return false;
    }
    png_set_read_fn(png, &source, png_on_read);
    // The pixel limit below is ours; libpng's default (a million per side) is not.
    png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
    png_read_info(png, info);
    png_uint_32 width = 0;
    png_uint_32 height = 0;
    int depth = 0;
    int color = 0;
    png_get_IHDR(png, info, &width, &height, &depth, &color, nullptr, nullptr, nullptr);
    out->width = static_cast<int>(width);
    out->height = static_cast<int>(height);
    bool has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
    out->source_has_alpha = (color & PNG_COLOR_MASK_ALPHA) != 0 || has_trns;
    out->channels = ((color & PNG_COLOR_MASK_COLOR) != 0 ? 3 : 1) + (out->source_has_alpha ? 1 : 0);
    png_uint_32 x_res = 0;
    png_uint_32 y_res = 0;
    int unit = 0;
    if (png_get_pHYs(png, info, &x_res, &y_res, &unit) != 0 && unit == PNG_RESOLUTION_METER) {
        out->x_dpi = x_res * 0.0254;
        out->y_dpi = y_res * 0.0254;
    }
    if (header_only || static_cast<int64_t>(width) * static_cast<int64_t>(height) > max_pixels) {
        png_destroy_read_struct(&png, &info, nullptr);
        return true; // the caller compares the size with its limit and words the refusal
    }
    if (color == PNG_COLOR_TYPE_PALETTE) {
        png_set_palette_to_rgb(png);
    }
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8) {
        png_set_expand_gray_1_2_4_to_8(png);
    }
    if (has_trns) {
        png_set_tRNS_to_alpha(png);
    }
    if (depth == 16) {
        png_set_scale_16(png);
    }
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    size_t row_bytes = png_get_rowbytes(png, info);
    out->channels = png_get_channels(png, info);
    out->pixels = static_cast<unsigned char *>(std::malloc(row_bytes * height));
    if (!out->pixels) {
        png_destroy_read_struct(&png, &info, nullptr);
        set_message(status, "out of memory");
        return false;
    }
    // Row by row, every pass into the same full rows: no row-pointer array to
    // free after a longjmp.
    for (int pass = 0; pass < passes; ++pass) {
        for (png_uint_32 y = 0; y < height; ++y) {
            png_read_row(png, out->pixels + static_cast<size_t>(y) * row_bytes, nullptr);
        }
    }
    // Not png_read_end: chunks after the image data (or a lost IEND) change nothing we use.
    png_destroy_read_struct(&png, &info, nullptr);
    return true;
}

bool decode_jpeg(const unsigned char *data, size_t length, int64_t max_pixels, Decoded *out,
                 CodecStatus *status) noexcept {
    decoded_init(out);
    jpeg_decompress_struct cinfo;
    std::memset(&cinfo, 0, sizeof(cinfo));
    JpegError error;
    cinfo.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = jpeg_on_error;
    error.manager.output_message = jpeg_on_message;
    error.status = status;
    if (setjmp(error.jump)) {
        jpeg_destroy_decompress(&cinfo);
        std::free(out->pixels);
        out->pixels = nullptr;
        return false;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(length));
    jpeg_read_header(&cinfo, TRUE);
    out->width = static_cast<int>(cinfo.image_width);
    out->height = static_cast<int>(cinfo.image_height);
    bool cmyk = cinfo.num_components == 4;
    cinfo.out_color_space = cmyk ? JCS_CMYK : (cinfo.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB);
    out->channels = cinfo.num_components == 1 ? 1 : 3;
    if (cinfo.density_unit == 1 || cinfo.density_unit == 2) {
        double scale = cinfo.density_unit == 2 ? 2.54 : 1.0;
        out->x_dpi = cinfo.X_density * scale;
        out->y_dpi = cinfo.Y_density * scale;
    }
    if (static_cast<int64_t>(cinfo.image_width) * static_cast<int64_t>(cinfo.image_height) > max_pixels) {
        jpeg_destroy_decompress(&cinfo);
        return true;
    }
    jpeg_start_decompress(&cinfo);
    size_t row_bytes = static_cast<size_t>(cinfo.output_width) * static_cast<size_t>(out->channels);
    out->pixels = static_cast<unsigned char *>(std::malloc(row_bytes * cinfo.output_height + 4 * cinfo.output_width));
    if (!out->pixels) {
        jpeg_fail(reinterpret_cast<j_common_ptr>(&cinfo), "out of memory");
    }
    while (cinfo.output_scanline < cinfo.output_height) {
        unsigned char *target = out->pixels + static_cast<size_t>(cinfo.output_scanline) * row_bytes;
        // A CMYK row is wider than its RGB result: it is read into the spare
        // row at the end of the buffer and converted into place.
        JSAMPROW row = cmyk ? out->pixels + row_bytes * cinfo.output_height : target;
        jpeg_read_scanlines(&cinfo, &row, 1);
        if (cmyk) {
            // Adobe writes inverted CMYK; without its marker the values are plain.
            bool inverted = cinfo.saw_Adobe_marker != 0;
            for (JDIMENSION x = 0; x < cinfo.output_width; ++x) {
                int c = row[4 * x], m = row[4 * x + 1], yl = row[4 * x + 2], k = row[4 * x + 3];
                if (!inverted) {
                    c = 255 - c, m = 255 - m, yl = 255 - yl, k = 255 - k;
                }
                target[3 * x] = static_cast<unsigned char>(c * k / 255);
                target[3 * x + 1] = static_cast<unsigned char>(m * k / 255);
                target[3 * x + 2] = static_cast<unsigned char>(yl * k / 255);
            }
        }
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    return true;
}

} // namespace hishim
