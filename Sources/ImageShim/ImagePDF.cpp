// Image files (JPEG, PNG, TIFF) to PDF, one page per image, written by hand:
// the structure is fixed and small, and a JPEG goes in byte for byte.
#include "Codecs.hpp"
#include "Common.hpp"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <tiffio.h>
#include <zlib.h>

using namespace hishim;

namespace {

// The whole file is held in memory (a JPEG is copied into the PDF as it is).
constexpr size_t kMaxImageFileBytes = size_t(512) << 20;
// Acrobat's limit on a page side (200 inches); larger pages are scaled down.
constexpr double kMaxPagePoints = 14400;
// Outside this range a resolution is a placeholder (1 dpi, 0 dpi, ...) or nonsense.
constexpr double kMinPlausibleDPI = 10;
constexpr double kMaxPlausibleDPI = 10000;
// Screenshots and scans compress well even at the fastest level, and the
// level changes the time far more than the size.
constexpr int kFlateLevel = Z_BEST_SPEED;

// PDF numbers must use '.', whatever the process locale says.
std::string number(double value) {
    long long scaled = std::llround(value * 10000);
    bool negative = scaled < 0;
    if (negative) {
        scaled = -scaled;
    }
    std::string text = std::to_string(scaled / 10000);
    long long fraction = scaled % 10000;
    if (fraction != 0) {
        std::string digits = std::to_string(fraction);
        digits.insert(0, 4 - digits.size(), '0');
        while (digits.back() == '0') {
            digits.pop_back();
        }
        text += "." + digits;
    }
    return negative ? "-" + text : text;
}

std::string ref(int object) {
    return std::to_string(object) + " 0 R";
}

std::string page_name(int page) {
    return "page " + std::to_string(page);
}

class PdfWriter {
public:
    PdfWriter(int fd, std::string name) : fd_(fd), name_(std::move(name)) {
        offsets_.push_back(0); // object 0, the head of the free list
        static const char header[] = "%PDF-1.4\n%\xE2\xE3\xCF\xD3\n";
        append(header, sizeof(header) - 1);
    }

    int reserve() {
        offsets_.push_back(0);
        return static_cast<int>(offsets_.size() - 1);
    }

    void object(int number, std::string const &body) {
        begin(number);
        text(body);
        end();
    }

    void stream(int number, std::string const &dictionary, const void *data, size_t length) {
        begin(number);
        text("<< " + dictionary + " /Length " + std::to_string(length) + " >>\nstream\n");
        append(data, length);
        text("\nendstream");
        end();
    }

    void finish(int root, int info) {
        uint64_t xref = position();
        std::string table = "xref\n0 " + std::to_string(offsets_.size()) + "\n0000000000 65535 f \n";
        char entry[32];
        for (size_t i = 1; i < offsets_.size(); ++i) {
            if (offsets_[i] == 0) {
                fail(HI_E_INTERNAL, name_ + ": object " + std::to_string(i) + " was reserved but never written");
            }
            std::snprintf(entry, sizeof(entry), "%010llu 00000 n \n", static_cast<unsigned long long>(offsets_[i]));
            table += entry;
        }
        table += "trailer\n<< /Size " + std::to_string(offsets_.size()) + " /Root " + ref(root) + " /Info " + ref(info) +
                 " >>\nstartxref\n" + std::to_string(xref) + "\n%%EOF\n";
        text(table);
        flush();
    }

private:
    static constexpr size_t kBuffer = size_t(1) << 20;

    uint64_t position() const { return written_ + buffer_.size(); }

    void begin(int number) {
        offsets_[static_cast<size_t>(number)] = position();
        text(std::to_string(number) + " 0 obj\n");
    }

    void end() { text("\nendobj\n"); }

    void text(std::string const &s) { append(s.data(), s.size()); }

    void append(const void *data, size_t length) {
        if (length >= kBuffer) {
            flush();
            write_direct(data, length);
            return;
        }
        buffer_.append(static_cast<const char *>(data), length);
        if (buffer_.size() >= kBuffer) {
            flush();
        }
    }

    void flush() {
        write_direct(buffer_.data(), buffer_.size());
        buffer_.clear();
    }

    void write_direct(const void *data, size_t length) {
        int e = write_all(fd_, data, length);
        if (e != 0) {
            fail(HI_E_SYSTEM, name_ + ": cannot write: " + std::strerror(e), e);
        }
        written_ += length;
    }

    int fd_;
    std::string name_;
    std::string buffer_;
    uint64_t written_ = 0;
    std::vector<uint64_t> offsets_;
};

// zlib, fed row by row, so color and alpha are split without a second copy
// of the image.
class Deflater {
public:
    explicit Deflater(int level) {
        std::memset(&z_, 0, sizeof(z_));
        if (deflateInit(&z_, level) != Z_OK) {
            throw std::bad_alloc();
        }
    }
    ~Deflater() { deflateEnd(&z_); }
    Deflater(Deflater const &) = delete;
    Deflater &operator=(Deflater const &) = delete;

    void add(const uint8_t *data, size_t length) { run(data, length, Z_NO_FLUSH); }

    std::vector<uint8_t> finish() {
        run(nullptr, 0, Z_FINISH);
        out_.resize(used_);
        return std::move(out_);
    }

private:
    void run(const uint8_t *data, size_t length, int flush) {
        z_.next_in = const_cast<Bytef *>(data); // zlib's input is not const; it only reads it
        z_.avail_in = static_cast<uInt>(length);
        for (;;) {
            if (out_.size() - used_ < (size_t(1) << 16)) {
                out_.resize(std::max(out_.size() * 2, used_ + (size_t(1) << 16)));
            }
            z_.next_out = out_.data() + used_;
            z_.avail_out = static_cast<uInt>(std::min(out_.size() - used_, size_t(1) << 30));
            size_t room = z_.avail_out;
            int r = deflate(&z_, flush);
            used_ += room - z_.avail_out;
            if (r == Z_STREAM_END) {
                return;
            }
            if (r != Z_OK && r != Z_BUF_ERROR) {
                fail(HI_E_INTERNAL, std::string("zlib failed: ") + (z_.msg ? z_.msg : "unknown error"));
            }
            if (flush != Z_FINISH && z_.avail_in == 0 && z_.avail_out > 0) {
                return;
            }
        }
    }

    z_stream z_;
    std::vector<uint8_t> out_;
    size_t used_ = 0;
};

struct Resolution {
    double x = 0;
    double y = 0;
    bool known = false;
};

// PNG stores pixels per meter, so 300 dpi comes back as 299.9994: a value
// that close to a whole number is taken as that number.
double snapped(double dpi) {
    double whole = std::floor(dpi + 0.5);
    return std::fabs(dpi - whole) < dpi * 0.0005 ? whole : dpi;
}

Resolution plausible(double x, double y) {
    x = snapped(x);
    y = snapped(y);
    Resolution r;
    if (x >= kMinPlausibleDPI && x <= kMaxPlausibleDPI && y >= kMinPlausibleDPI && y <= kMaxPlausibleDPI) {
        r.x = x;
        r.y = y;
        r.known = true;
    } else {
        r.x = 72;
        r.y = 72;
    }
    return r;
}

// An image XObject: the dictionary without /Type, /Subtype and /Length.
struct XImage {
    std::string dictionary;
    const uint8_t *data;
    size_t length;
};

std::string image_dictionary(int width, int height, const char *color_space, const char *filter) {
    return "/Width " + std::to_string(width) + " /Height " + std::to_string(height) + " /ColorSpace " + color_space +
           " /BitsPerComponent 8 /Filter " + filter;
}

// Collects pages and writes everything around them.
class ImagePDF {
public:
    ImagePDF(int fd, std::string output_name, std::string input_name, hi_warnings *warnings)
        : pdf_(fd, std::move(output_name)), name_(std::move(input_name)), warnings_(warnings) {
        catalog_ = pdf_.reserve();
        pages_ = pdf_.reserve();
    }

    // The image fills the page; orientation is EXIF's (and TIFF's) 1...8,
    // applied by the placement matrix so a JPEG keeps its bytes.
    void add_page(int width, int height, Resolution resolution, int orientation, XImage const &image,
                  XImage const *mask) {
        int index = static_cast<int>(kids_.size()) + 1;
        if (!resolution.known) {
            warnings_->add(name_ + ": " + (kids_.empty() && !multi_page_ ? std::string("the image") : page_name(index)) +
                           " has no usable resolution; the page assumes 72 dpi");
        }
        bool turned = orientation >= 5 && orientation <= 8;
        double page_w = (turned ? height : width) * 72.0 / (turned ? resolution.y : resolution.x);
        double page_h = (turned ? width : height) * 72.0 / (turned ? resolution.x : resolution.y);
        double longer = std::max(page_w, page_h);
        if (longer > kMaxPagePoints) {
            double scale = kMaxPagePoints / longer;
            page_w *= scale;
            page_h *= scale;
            warnings_->add(name_ + ": " + page_name(index) +
                           " would be larger than 200 inches at the image's resolution; it was scaled down to fit");
        }
        double w = page_w, h = page_h;
        // Maps the unit square of image space onto the page, turning or
        // mirroring per the orientation (row 0 of the stored image is y = 1).
        double m[6];
        switch (orientation) {
        case 2: m[0] = -w, m[1] = 0, m[2] = 0, m[3] = h, m[4] = w, m[5] = 0; break;
        case 3: m[0] = -w, m[1] = 0, m[2] = 0, m[3] = -h, m[4] = w, m[5] = h; break;
        case 4: m[0] = w, m[1] = 0, m[2] = 0, m[3] = -h, m[4] = 0, m[5] = h; break;
        case 5: m[0] = 0, m[1] = -h, m[2] = -w, m[3] = 0, m[4] = w, m[5] = h; break;
        case 6: m[0] = 0, m[1] = -h, m[2] = w, m[3] = 0, m[4] = 0, m[5] = h; break;
        case 7: m[0] = 0, m[1] = h, m[2] = w, m[3] = 0, m[4] = 0, m[5] = 0; break;
        case 8: m[0] = 0, m[1] = h, m[2] = -w, m[3] = 0, m[4] = w, m[5] = 0; break;
        default: m[0] = w, m[1] = 0, m[2] = 0, m[3] = h, m[4] = 0, m[5] = 0; break;
        }
        int page = pdf_.reserve();
        int content = pdf_.reserve();
        int xobject = pdf_.reserve();
        int smask = mask ? pdf_.reserve() : 0;
        if (mask) {
            pdf_.stream(smask, "/Type /XObject /Subtype /Image " + mask->dictionary, mask->data, mask->length);
        }
        pdf_.stream(xobject,
                    "/Type /XObject /Subtype /Image " + image.dictionary + (mask ? " /SMask " + ref(smask) : ""),
                    image.data, image.length);
        std::string ops = "q";
        for (double v : m) {
            ops += " " + number(v);
        }
        ops += " cm /Im0 Do Q\n";
        pdf_.stream(content, "", ops.data(), ops.size());
        pdf_.object(page, "<< /Type /Page /Parent " + ref(pages_) + " /MediaBox [0 0 " + number(page_w) + " " +
                              number(page_h) + "] /Resources << /XObject << /Im0 " + ref(xobject) +
                              " >> >> /Contents " + ref(content) + " >>");
        kids_.push_back(page);
    }

    void set_multi_page() { multi_page_ = true; }

    int finish() {
        std::string kids;
        for (int k : kids_) {
            kids += (kids.empty() ? "" : " ") + ref(k);
        }
        pdf_.object(pages_, "<< /Type /Pages /Kids [" + kids + "] /Count " + std::to_string(kids_.size()) + " >>");
        pdf_.object(catalog_, "<< /Type /Catalog /Pages " + ref(pages_) + " >>");
        int info = pdf_.reserve();
        pdf_.object(info, "<< /Producer (hotfolder) >>");
        pdf_.finish(catalog_, info);
        return static_cast<int>(kids_.size());
    }

private:
    PdfWriter pdf_;
    std::string name_;
    hi_warnings *warnings_;
    int catalog_;
    int pages_;
    std::vector<int> kids_;
    bool multi_page_ = false;
};

void check_pixels(std::string const &name, std::string const &what, int64_t width, int64_t height, int64_t limit) {
    if (width * height > limit) {
        char detail[160];
        std::snprintf(detail, sizeof(detail), " is %lld x %lld pixels (%.1f megapixels); the limit is %.1f megapixels",
                      static_cast<long long>(width), static_cast<long long>(height), width * height / 1e6, limit / 1e6);
        fail(HI_E_TOO_LARGE, name + ": " + what + detail);
    }
}

// MARK: - type

int detect(std::vector<uint8_t> const &d, std::string const &name) {
    auto starts = [&](const char *magic, size_t length, size_t at = 0) {
        return d.size() >= at + length && std::memcmp(d.data() + at, magic, length) == 0;
    };
    if (d.empty()) {
        fail(HI_E_DAMAGED, name + ": the file is empty");
    }
    if (starts("\xFF\xD8\xFF", 3)) {
        return HI_IMAGE_JPEG;
    }
    if (starts("\x89PNG\r\n\x1A\n", 8)) {
        return HI_IMAGE_PNG;
    }
    if (starts("II*\0", 4) || starts("MM\0*", 4) || starts("II+\0", 4) || starts("MM\0+", 4)) {
        return HI_IMAGE_TIFF;
    }
    const char *other = nullptr;
    if (starts("GIF8", 4)) {
        other = "a GIF image";
    } else if (starts("BM", 2)) {
        other = "a BMP image";
    } else if (starts("RIFF", 4) && starts("WEBP", 4, 8)) {
        other = "a WebP image";
    } else if (starts("ftypheic", 8, 4) || starts("ftypheix", 8, 4) || starts("ftypmif1", 8, 4)) {
        other = "a HEIC image";
    } else if (starts("%PDF-", 5)) {
        other = "a PDF";
    }
    if (other) {
        fail(HI_E_UNSUPPORTED, name + ": the file is " + other + ", not a JPEG, PNG or TIFF image");
    }
    fail(HI_E_FORMAT, name + ": the file is not a JPEG, PNG or TIFF image");
}

// MARK: - JPEG

struct JpegHeader {
    int width = 0;
    int height = 0;
    int components = 0;
    bool adobe = false;
    int orientation = 1;
    double jfif_x = 0, jfif_y = 0;
    double exif_x = 0, exif_y = 0;

    Resolution resolution() const {
        if (jfif_x > 0 && jfif_y > 0) {
            return plausible(jfif_x, jfif_y);
        }
        return plausible(exif_x, exif_y);
    }
};

// IFD0 of the TIFF structure inside an Exif segment: orientation and resolution.
void parse_exif(const uint8_t *t, size_t n, JpegHeader &h) {
    if (n < 8) {
        return;
    }
    bool little = t[0] == 'I' && t[1] == 'I';
    if (!little && !(t[0] == 'M' && t[1] == 'M')) {
        return;
    }
    auto u16 = [&](size_t at) -> uint32_t {
        return little ? (t[at] | (t[at + 1] << 8)) : ((t[at] << 8) | t[at + 1]);
    };
    auto u32 = [&](size_t at) -> uint32_t {
        return little ? (uint32_t(t[at]) | (uint32_t(t[at + 1]) << 8) | (uint32_t(t[at + 2]) << 16) |
                         (uint32_t(t[at + 3]) << 24))
                      : ((uint32_t(t[at]) << 24) | (uint32_t(t[at + 1]) << 16) | (uint32_t(t[at + 2]) << 8) |
                         uint32_t(t[at + 3]));
    };
    if (u16(2) != 42) {
        return;
    }
    size_t ifd = u32(4);
    if (ifd > n - 2) {
        return;
    }
    size_t count = u16(ifd);
    double x = 0, y = 0;
    uint32_t unit = 2; // Exif's default: inches
    for (size_t i = 0; i < count; ++i) {
        size_t e = ifd + 2 + 12 * i;
        if (e > n - 12) {
            break;
        }
        uint32_t tag = u16(e);
        uint32_t type = u16(e + 2);
        if (type == 3 && tag == 0x0112) {
            uint32_t o = u16(e + 8);
            if (o >= 1 && o <= 8) {
                h.orientation = static_cast<int>(o);
            }
        } else if (type == 3 && tag == 0x0128) {
            unit = u16(e + 8);
        } else if (type == 5 && (tag == 0x011A || tag == 0x011B)) {
            size_t at = u32(e + 8);
            if (at <= n - 8 && u32(at + 4) != 0) {
                (tag == 0x011A ? x : y) = double(u32(at)) / double(u32(at + 4));
            }
        }
    }
    if (unit == 2 || unit == 3) {
        double scale = unit == 3 ? 2.54 : 1.0;
        h.exif_x = x * scale;
        h.exif_y = y * scale;
    }
}

// Walks the markers up to the first scan, then makes sure the data ends:
// 0xFF 0xD9 cannot occur inside entropy-coded data (0xFF is stuffed there),
// so a file without it after the scan was cut short.
JpegHeader parse_jpeg(std::vector<uint8_t> const &d, std::string const &name) {
    JpegHeader h;
    size_t n = d.size();
    size_t pos = 2;
    bool frame = false;
    std::string truncated = name + ": the JPEG is truncated: ";
    for (;;) {
        while (pos < n && d[pos] != 0xFF) {
            ++pos; // stray bytes between segments: decoders skip them too
        }
        while (pos < n && d[pos] == 0xFF) {
            ++pos;
        }
        if (pos >= n) {
            fail(HI_E_DAMAGED, truncated + "no image data (SOS) found");
        }
        uint8_t marker = d[pos++];
        if (marker == 0x00 || marker == 0x01 || marker == 0xD8 || (marker >= 0xD0 && marker <= 0xD7)) {
            continue; // no length follows
        }
        if (marker == 0xD9) {
            fail(HI_E_DAMAGED, name + ": the JPEG is damaged: it ends (EOI) with no image data (SOS)");
        }
        if (pos + 2 > n) {
            fail(HI_E_DAMAGED, truncated + "it ends inside its headers");
        }
        size_t length = (size_t(d[pos]) << 8) | d[pos + 1];
        if (length < 2) {
            fail(HI_E_DAMAGED, name + ": the JPEG is damaged: a marker segment has an invalid length");
        }
        if (pos + length > n) {
            fail(HI_E_DAMAGED, truncated + "it ends inside its headers");
        }
        const uint8_t *s = d.data() + pos + 2;
        size_t sn = length - 2;
        bool sof = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
        if (sof && !frame) {
            if (marker != 0xC0 && marker != 0xC1 && marker != 0xC2) {
                fail(HI_E_UNSUPPORTED, name + ": the JPEG uses lossless, hierarchical or arithmetic coding, "
                                              "which PDF readers do not decode");
            }
            if (sn < 6) {
                fail(HI_E_DAMAGED, name + ": the JPEG is damaged: its frame header (SOF) is too short");
            }
            if (s[0] != 8) {
                fail(HI_E_UNSUPPORTED, name + ": the JPEG has " + std::to_string(s[0]) +
                                           "-bit samples; PDF takes only 8-bit JPEG");
            }
            h.height = (s[1] << 8) | s[2];
            h.width = (s[3] << 8) | s[4];
            h.components = s[5];
            if (h.width == 0 || h.height == 0) {
                fail(HI_E_UNSUPPORTED, name + ": the JPEG does not state its size in its frame header");
            }
            if (h.components != 1 && h.components != 3 && h.components != 4) {
                fail(HI_E_UNSUPPORTED, name + ": the JPEG has " + std::to_string(h.components) +
                                           " color components (PDF takes 1, 3 or 4)");
            }
            frame = true;
        } else if (marker == 0xE0 && sn >= 12 && std::memcmp(s, "JFIF\0", 5) == 0) {
            int unit = s[7];
            double x = (s[8] << 8) | s[9];
            double y = (s[10] << 8) | s[11];
            if (unit == 1 || unit == 2) {
                h.jfif_x = unit == 2 ? x * 2.54 : x;
                h.jfif_y = unit == 2 ? y * 2.54 : y;
            }
        } else if (marker == 0xE1 && sn >= 14 && std::memcmp(s, "Exif\0\0", 6) == 0) {
            parse_exif(s + 6, sn - 6, h);
        } else if (marker == 0xEE && sn >= 5 && std::memcmp(s, "Adobe", 5) == 0) {
            h.adobe = true;
        } else if (marker == 0xDA) {
            if (!frame) {
                fail(HI_E_DAMAGED, name + ": the JPEG is damaged: its image data comes before its frame header (SOF)");
            }
            const uint8_t *p = d.data() + pos + length;
            const uint8_t *end = d.data() + n;
            bool ended = false;
            while (p < end) {
                const uint8_t *ff = static_cast<const uint8_t *>(std::memchr(p, 0xFF, static_cast<size_t>(end - p)));
                if (!ff || ff + 1 >= end) {
                    break;
                }
                if (ff[1] == 0xD9) {
                    ended = true;
                    break;
                }
                p = ff + 1;
            }
            if (!ended) {
                fail(HI_E_DAMAGED, truncated + "its image data has no end (EOI marker missing)");
            }
            return h;
        }
        pos += length;
    }
}

int convert_jpeg(ImagePDF &out, std::vector<uint8_t> const &data, std::string const &name, int64_t max_pixels) {
    JpegHeader h = parse_jpeg(data, name);
    check_pixels(name, "the image", h.width, h.height, max_pixels);
    const char *space = h.components == 1 ? "/DeviceGray" : h.components == 3 ? "/DeviceRGB" : "/DeviceCMYK";
    std::string dictionary = image_dictionary(h.width, h.height, space, "/DCTDecode");
    if (h.components == 4 && h.adobe) {
        // Photoshop writes CMYK inverted and says so only through its APP14
        // marker; PDF readers ignore that, so the inversion is stated here
        // (as pdfimages and img2pdf expect).
        dictionary += " /Decode [1 0 1 0 1 0 1 0]";
    }
    XImage image{dictionary, data.data(), data.size()};
    out.add_page(h.width, h.height, h.resolution(), h.orientation, image, nullptr);
    return 1;
}

// MARK: - PNG

struct FreeDeleter {
    void operator()(unsigned char *p) const { std::free(p); }
};

std::string png_failure(std::string const &name, const char *message) {
    std::string m = message;
    return m.rfind("the PNG", 0) == 0 ? name + ": " + m : name + ": the PNG is damaged: " + m;
}

void note_codec_warnings(hi_warnings *warnings, std::string const &name, const char *library,
                         CodecStatus const &status) {
    if (status.warnings > 0) {
        std::string more = status.warnings > 1 ? " (and " + std::to_string(status.warnings - 1) + " more)" : "";
        warnings->add(name + ": " + library + ": " + status.warning + more);
    }
}

// Splits interleaved 8-bit samples into color and alpha and compresses both;
// the alpha is dropped when every pixel is opaque.
struct Planes {
    std::vector<uint8_t> color;
    std::vector<uint8_t> alpha;
    bool has_alpha = false;
};

Planes compress_planes(const uint8_t *pixels, int width, int height, int channels) {
    Planes planes;
    size_t w = static_cast<size_t>(width);
    int color = channels >= 3 ? 3 : 1;
    bool alpha = channels == 2 || channels == 4;
    if (alpha) {
        size_t total = w * static_cast<size_t>(height);
        for (size_t i = 0; i < total; ++i) {
            if (pixels[i * static_cast<size_t>(channels) + static_cast<size_t>(color)] != 255) {
                planes.has_alpha = true;
                break;
            }
        }
    }
    Deflater color_out(kFlateLevel);
    std::unique_ptr<Deflater> alpha_out(planes.has_alpha ? new Deflater(kFlateLevel) : nullptr);
    std::vector<uint8_t> color_row(alpha ? w * static_cast<size_t>(color) : 0);
    std::vector<uint8_t> alpha_row(planes.has_alpha ? w : 0);
    size_t stride = w * static_cast<size_t>(channels);
    for (int y = 0; y < height; ++y) {
        const uint8_t *row = pixels + static_cast<size_t>(y) * stride;
        if (!alpha) {
            color_out.add(row, stride);
            continue;
        }
        for (size_t x = 0; x < w; ++x) {
            const uint8_t *p = row + x * static_cast<size_t>(channels);
            for (int c = 0; c < color; ++c) {
                color_row[x * static_cast<size_t>(color) + static_cast<size_t>(c)] = p[c];
            }
            if (planes.has_alpha) {
                alpha_row[x] = p[color];
            }
        }
        color_out.add(color_row.data(), color_row.size());
        if (alpha_out) {
            alpha_out->add(alpha_row.data(), alpha_row.size());
        }
    }
    planes.color = color_out.finish();
    if (alpha_out) {
        planes.alpha = alpha_out->finish();
    }
    return planes;
}

void add_planes(ImagePDF &out, Planes const &planes, int width, int height, int color_channels,
                Resolution resolution, int orientation) {
    XImage image{image_dictionary(width, height, color_channels == 1 ? "/DeviceGray" : "/DeviceRGB", "/FlateDecode"),
                 planes.color.data(), planes.color.size()};
    XImage mask{image_dictionary(width, height, "/DeviceGray", "/FlateDecode"), planes.alpha.data(),
                planes.alpha.size()};
    out.add_page(width, height, resolution, orientation, image, planes.has_alpha ? &mask : nullptr);
}

int convert_png(ImagePDF &out, std::vector<uint8_t> const &data, std::string const &name, int64_t max_pixels,
                hi_warnings *warnings) {
    CodecStatus status;
    status_init(&status);
    Decoded image;
    if (!decode_png(data.data(), data.size(), false, max_pixels, &image, &status)) {
        fail(HI_E_DAMAGED, png_failure(name, status.message));
    }
    std::unique_ptr<unsigned char, FreeDeleter> pixels(image.pixels);
    check_pixels(name, "the image", image.width, image.height, max_pixels);
    if (!pixels) {
        fail(HI_E_INTERNAL, name + ": the PNG decoder returned no pixels");
    }
    note_codec_warnings(warnings, name, "libpng", status);
    Planes planes = compress_planes(pixels.get(), image.width, image.height, image.channels);
    pixels.reset();
    add_planes(out, planes, image.width, image.height, image.channels >= 3 ? 3 : 1,
               plausible(image.x_dpi, image.y_dpi), 1);
    return 1;
}

// MARK: - TIFF

struct MemoryFile {
    const uint8_t *data;
    uint64_t size;
    uint64_t position;
};

tmsize_t tiff_read(thandle_t handle, void *buffer, tmsize_t length) {
    MemoryFile *file = static_cast<MemoryFile *>(handle);
    if (length <= 0 || file->position >= file->size) {
        return 0;
    }
    uint64_t n = std::min<uint64_t>(static_cast<uint64_t>(length), file->size - file->position);
    std::memcpy(buffer, file->data + file->position, static_cast<size_t>(n));
    file->position += n;
    return static_cast<tmsize_t>(n);
}

tmsize_t tiff_write(thandle_t, void *, tmsize_t) {
    return -1;
}

toff_t tiff_seek(thandle_t handle, toff_t offset, int whence) {
    MemoryFile *file = static_cast<MemoryFile *>(handle);
    int64_t base = whence == SEEK_CUR ? static_cast<int64_t>(file->position)
                   : whence == SEEK_END ? static_cast<int64_t>(file->size)
                                        : 0;
    int64_t target = base + static_cast<int64_t>(offset);
    if (target < 0) {
        return static_cast<toff_t>(-1);
    }
    file->position = static_cast<uint64_t>(target);
    return file->position;
}

int tiff_close(thandle_t) {
    return 0;
}

toff_t tiff_size(thandle_t handle) {
    return static_cast<MemoryFile *>(handle)->size;
}

int tiff_map(thandle_t, void **, toff_t *) {
    return 0;
}

void tiff_unmap(thandle_t, void *, toff_t) {}

// libtiff's messages for one file: errors explain a failure, warnings go to the job's list.
struct TiffMessages {
    hi_warnings *warnings;
    std::string first_error;
};

int tiff_on_error(TIFF *, void *user, const char *module, const char *format, va_list arguments) {
    try {
        char text[1024];
        std::vsnprintf(text, sizeof(text), format, arguments);
        TiffMessages *messages = static_cast<TiffMessages *>(user);
        if (messages->first_error.empty()) {
            messages->first_error = (module ? std::string(module) + ": " : std::string()) + text;
        }
    } catch (...) {
    }
    return 1; // handled: nothing goes to the process-wide handler
}

int tiff_on_warning(TIFF *, void *user, const char *module, const char *format, va_list arguments) {
    try {
        char text[1024];
        std::vsnprintf(text, sizeof(text), format, arguments);
        TiffMessages *messages = static_cast<TiffMessages *>(user);
        if (messages->warnings) {
            messages->warnings->add("libtiff: " + (module ? std::string(module) + ": " : std::string()) + text);
        }
    } catch (...) {
    }
    return 1;
}

struct TiffCloser {
    void operator()(TIFF *tif) const { TIFFClose(tif); }
};

struct OptionsFree {
    void operator()(TIFFOpenOptions *o) const { TIFFOpenOptionsFree(o); }
};

class TiffFile {
public:
    TiffFile(std::vector<uint8_t> const &data, std::string const &name, hi_warnings *warnings)
        : file_{data.data(), data.size(), 0}, messages_{warnings, std::string()} {
        std::unique_ptr<TIFFOpenOptions, OptionsFree> options(TIFFOpenOptionsAlloc());
        if (!options) {
            throw std::bad_alloc();
        }
        TIFFOpenOptionsSetErrorHandlerExtR(options.get(), tiff_on_error, &messages_);
        TIFFOpenOptionsSetWarningHandlerExtR(options.get(), tiff_on_warning, &messages_);
        // A hostile header can ask libtiff for a huge strip buffer.
        TIFFOpenOptionsSetMaxSingleMemAlloc(options.get(), tmsize_t(1) << 30);
        // "m": no mapping; libtiff reads through tiff_read, never into our buffer.
        tif_.reset(TIFFClientOpenExt(name.c_str(), "rm", &file_, tiff_read, tiff_write, tiff_seek, tiff_close,
                                     tiff_size, tiff_map, tiff_unmap, options.get()));
        if (!tif_) {
            fail(HI_E_DAMAGED, name + ": the TIFF is damaged: " + error("libtiff cannot open it"));
        }
    }

    TIFF *get() const { return tif_.get(); }

    std::string error(const char *fallback) const {
        return messages_.first_error.empty() ? std::string(fallback) : messages_.first_error;
    }

    // A reduced-resolution copy (a thumbnail) is not a page.
    bool is_thumbnail() const {
        uint32_t type = 0;
        return TIFFGetField(tif_.get(), TIFFTAG_SUBFILETYPE, &type) == 1 && (type & FILETYPE_REDUCEDIMAGE) != 0;
    }

    // False at the last directory; fails when the next one cannot be read,
    // so a damaged file does not quietly lose its later pages.
    bool next(std::string const &name, int pages_read) {
        if (TIFFLastDirectory(tif_.get())) {
            return false;
        }
        if (!TIFFReadDirectory(tif_.get())) {
            fail(HI_E_DAMAGED, name + ": the TIFF is damaged after " + page_name(pages_read) + ": " +
                                   error("the next page cannot be read"));
        }
        return true;
    }

    Resolution resolution() const {
        float x = 0, y = 0;
        uint16_t unit = RESUNIT_INCH;
        TIFFGetFieldDefaulted(tif_.get(), TIFFTAG_RESOLUTIONUNIT, &unit);
        if (TIFFGetField(tif_.get(), TIFFTAG_XRESOLUTION, &x) != 1) {
            x = 0;
        }
        if (TIFFGetField(tif_.get(), TIFFTAG_YRESOLUTION, &y) != 1) {
            y = x;
        }
        if (unit == RESUNIT_CENTIMETER) {
            return plausible(x * 2.54, y * 2.54);
        }
        return unit == RESUNIT_INCH ? plausible(x, y) : plausible(0, 0);
    }

    void size(std::string const &name, int page, uint32_t &width, uint32_t &height) const {
        if (TIFFGetField(tif_.get(), TIFFTAG_IMAGEWIDTH, &width) != 1 ||
            TIFFGetField(tif_.get(), TIFFTAG_IMAGELENGTH, &height) != 1 || width == 0 || height == 0) {
            fail(HI_E_DAMAGED, name + ": the TIFF is damaged: " + page_name(page) + " has no size");
        }
    }

    bool is_gray() const {
        uint16_t photometric = 0, samples = 1, extra = 0;
        uint16_t *types = nullptr;
        TIFFGetFieldDefaulted(tif_.get(), TIFFTAG_SAMPLESPERPIXEL, &samples);
        TIFFGetFieldDefaulted(tif_.get(), TIFFTAG_EXTRASAMPLES, &extra, &types);
        return TIFFGetField(tif_.get(), TIFFTAG_PHOTOMETRIC, &photometric) == 1 &&
               (photometric == PHOTOMETRIC_MINISBLACK || photometric == PHOTOMETRIC_MINISWHITE) &&
               samples - extra == 1;
    }

    int orientation() const {
        uint16_t o = ORIENTATION_TOPLEFT;
        TIFFGetFieldDefaulted(tif_.get(), TIFFTAG_ORIENTATION, &o);
        return o >= 1 && o <= 8 ? o : 1;
    }

private:
    MemoryFile file_;
    TiffMessages messages_;
    std::unique_ptr<TIFF, TiffCloser> tif_;
};

int convert_tiff(ImagePDF &out, std::vector<uint8_t> const &data, std::string const &name, int64_t max_pixels,
                 hi_warnings *warnings) {
    TiffFile tiff(data, name, warnings);
    if (!TIFFLastDirectory(tiff.get())) {
        out.set_multi_page();
    }
    int pages = 0;
    do {
        if (tiff.is_thumbnail()) {
            continue;
        }
        int page = pages + 1;
        uint32_t width = 0, height = 0;
        tiff.size(name, page, width, height);
        check_pixels(name, page_name(page), width, height, max_pixels);
        char why[1024] = "";
        if (!TIFFRGBAImageOK(tiff.get(), why)) {
            fail(HI_E_UNSUPPORTED, name + ": " + page_name(page) + " of the TIFF cannot be read: " + why);
        }
        // libtiff only flips while reading; a transposed orientation (5...8)
        // is read as stored and turned by the page's matrix instead.
        int orientation = tiff.orientation();
        int requested = orientation >= 5 ? orientation : ORIENTATION_TOPLEFT;
        std::vector<uint32_t> raster(static_cast<size_t>(width) * height);
        if (!TIFFReadRGBAImageOriented(tiff.get(), width, height, raster.data(), requested, 1)) {
            fail(HI_E_DAMAGED, name + ": the TIFF is damaged: " + page_name(page) + ": " + tiff.error("cannot be read"));
        }
        bool gray = tiff.is_gray();
        int channels = (gray ? 1 : 3) + 1;
        // Repacked as interleaved samples for the shared splitter, in place:
        // pixel i's samples end before pixel i + 1's word, which is read next,
        // so a 100-megapixel page does not need a second 400 MB buffer.
        // libtiff gives premultiplied alpha; PDF's soft mask wants it separate.
        uint8_t *const pixels = reinterpret_cast<uint8_t *>(raster.data());
        uint8_t *p = pixels;
        for (size_t i = 0; i < raster.size(); ++i) {
            uint32_t v = raster[i];
            unsigned a = TIFFGetA(v);
            unsigned rgb[3] = {TIFFGetR(v), TIFFGetG(v), TIFFGetB(v)};
            if (a != 255) {
                for (unsigned &c : rgb) {
                    c = a == 0 ? 255 : std::min(255u, (c * 255 + a / 2) / a);
                }
            }
            if (gray) {
                *p++ = static_cast<uint8_t>(rgb[0]);
            } else {
                *p++ = static_cast<uint8_t>(rgb[0]);
                *p++ = static_cast<uint8_t>(rgb[1]);
                *p++ = static_cast<uint8_t>(rgb[2]);
            }
            *p++ = static_cast<uint8_t>(a);
        }
        Planes planes = compress_planes(pixels, static_cast<int>(width), static_cast<int>(height), channels);
        std::vector<uint32_t>().swap(raster);
        add_planes(out, planes, static_cast<int>(width), static_cast<int>(height), gray ? 1 : 3, tiff.resolution(),
                   orientation >= 5 ? orientation : 1);
        ++pages;
    } while (tiff.next(name, pages));
    if (pages == 0) {
        fail(HI_E_DAMAGED, name + ": the TIFF has no pages (only reduced-resolution copies)");
    }
    return pages;
}

// MARK: - probe

void probe(std::vector<uint8_t> const &data, std::string const &name, hi_image_info *info) {
    info->type = detect(data, name);
    info->pages = 1;
    info->orientation = 1;
    Resolution resolution;
    switch (info->type) {
    case HI_IMAGE_JPEG: {
        JpegHeader h = parse_jpeg(data, name);
        info->width = h.width;
        info->height = h.height;
        info->components = h.components;
        info->orientation = h.orientation;
        resolution = h.resolution();
        break;
    }
    case HI_IMAGE_PNG: {
        CodecStatus status;
        status_init(&status);
        Decoded image;
        if (!decode_png(data.data(), data.size(), true, 0, &image, &status)) {
            fail(HI_E_DAMAGED, png_failure(name, status.message));
        }
        info->width = image.width;
        info->height = image.height;
        info->has_alpha = image.source_has_alpha;
        info->components = image.channels - (image.source_has_alpha ? 1 : 0);
        resolution = plausible(image.x_dpi, image.y_dpi);
        break;
    }
    default: {
        TiffFile tiff(data, name, nullptr);
        int pages = 0;
        do {
            if (tiff.is_thumbnail()) {
                continue;
            }
            if (++pages == 1) {
                uint32_t width = 0, height = 0;
                tiff.size(name, 1, width, height);
                info->width = static_cast<int>(width);
                info->height = static_cast<int>(height);
                uint16_t extra = 0;
                uint16_t *types = nullptr;
                TIFFGetFieldDefaulted(tiff.get(), TIFFTAG_EXTRASAMPLES, &extra, &types);
                info->has_alpha = extra > 0;
                info->components = tiff.is_gray() ? 1 : 3;
                info->orientation = tiff.orientation();
                resolution = tiff.resolution();
            }
        } while (tiff.next(name, pages));
        info->pages = pages;
        break;
    }
    }
    info->x_dpi = resolution.x;
    info->y_dpi = resolution.y;
    info->resolution_known = resolution.known ? 1 : 0;
}

} // namespace

extern "C" {

int hi_image_probe_fd(int fd, const char *description, hi_image_info *info, hi_error *err) {
    return guarded(err, description, -1, [&]() -> int {
        if (!info) {
            fail(HI_E_ARGUMENT, "null argument");
        }
        install_message_handlers();
        std::memset(info, 0, sizeof(*info));
        std::string name = file_name(description);
        std::vector<uint8_t> data = read_all(fd, description, kMaxImageFileBytes);
        probe(data, name, info);
        return 0;
    });
}

int hi_image_to_pdf_fd(int input_fd, const char *description, const hi_convert_options *options,
                       hi_warnings *warnings, hi_error *err) {
    return guarded(err, description, -1, [&]() -> int {
        if (!options || options->max_pixels <= 0) {
            fail(HI_E_ARGUMENT, file_name(description) + ": invalid conversion options");
        }
        install_message_handlers();
        hi_warnings discarded;
        hi_warnings *notes = warnings ? warnings : &discarded;
        CollectWarnings collect(notes);
        std::string name = file_name(description);
        std::vector<uint8_t> data = read_all(input_fd, description, kMaxImageFileBytes);
        int type = detect(data, name);
        ImagePDF out(options->output_fd, file_name(options->output_description), name, notes);
        switch (type) {
        case HI_IMAGE_JPEG: convert_jpeg(out, data, name, options->max_pixels); break;
        case HI_IMAGE_PNG: convert_png(out, data, name, options->max_pixels, notes); break;
        default: convert_tiff(out, data, name, options->max_pixels, notes); break;
        }
        return out.finish();
    });
}

int hi_decode_rgb(const uint8_t *bytes, size_t length, const char *description, int64_t max_pixels, uint8_t **rgb,
                  int *width, int *height, hi_error *err) {
    return guarded(err, description, -1, [&]() -> int {
        if (!bytes || !rgb || !width || !height || max_pixels <= 0) {
            fail(HI_E_ARGUMENT, "null argument");
        }
        *rgb = nullptr;
        std::string name = file_name(description);
        bool png = length >= 8 && std::memcmp(bytes, "\x89PNG\r\n\x1A\n", 8) == 0;
        bool jpeg = length >= 3 && std::memcmp(bytes, "\xFF\xD8\xFF", 3) == 0;
        if (!png && !jpeg) {
            fail(HI_E_FORMAT, name + ": not a PNG or JPEG image");
        }
        CodecStatus status;
        status_init(&status);
        Decoded image;
        bool ok = png ? decode_png(bytes, length, false, max_pixels, &image, &status)
                      : decode_jpeg(bytes, length, max_pixels, &image, &status);
        if (!ok) {
            fail(HI_E_DAMAGED, png ? png_failure(name, status.message) : name + ": the JPEG is damaged: " + status.message);
        }
        std::unique_ptr<unsigned char, FreeDeleter> pixels(image.pixels);
        check_pixels(name, "the image", image.width, image.height, max_pixels);
        if (!pixels) {
            fail(HI_E_INTERNAL, name + ": the decoder returned no pixels");
        }
        if (!png && status.warnings > 0) {
            // libjpeg pads a cut-off file with gray and only warns.
            fail(HI_E_DAMAGED, name + ": the JPEG is damaged: " + status.warning);
        }
        size_t count = static_cast<size_t>(image.width) * static_cast<size_t>(image.height);
        unsigned char *result = static_cast<unsigned char *>(std::malloc(count * 3));
        if (!result) {
            throw std::bad_alloc();
        }
        const unsigned char *s = pixels.get();
        int c = image.channels;
        for (size_t i = 0; i < count; ++i, s += c) {
            unsigned r, g, b, a = 255;
            if (c <= 2) {
                r = g = b = s[0];
                a = c == 2 ? s[1] : 255;
            } else {
                r = s[0], g = s[1], b = s[2];
                a = c == 4 ? s[3] : 255;
            }
            // Composited on white, as a viewer shows it.
            result[3 * i] = static_cast<unsigned char>((r * a + 255 * (255 - a) + 127) / 255);
            result[3 * i + 1] = static_cast<unsigned char>((g * a + 255 * (255 - a) + 127) / 255);
            result[3 * i + 2] = static_cast<unsigned char>((b * a + 255 * (255 - a) + 127) / 255);
        }
        *rgb = result;
        *width = image.width;
        *height = image.height;
        return 0;
    });
}

} // extern "C"
