// PDF pages to PNG or JPEG: poppler (splash) renders, our own encoders write.
#include "Codecs.hpp"
#include "Common.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <utility>

#include <poppler/cpp/poppler-document.h>
#include <poppler/cpp/poppler-image.h>
#include <poppler/cpp/poppler-page-renderer.h>
#include <poppler/cpp/poppler-page.h>

#include <png.h>

using namespace hishim;

namespace {

// poppler takes the length as an int; well below that, a PDF this large is
// not something a drop folder should render in memory.
constexpr size_t kMaxPDFBytes = size_t(1) << 30;

// PNG encoding, measured with bench/render-png.sh (one dense A4 text page at
// 150 dpi, 1240x1754, median of runs; rendering itself took 18 ms):
//   poppler::image::save("png")    ~560 ms  598 KB
//   libpng level 1, no filter      ~21 ms  546 KB   <- used
//   libpng level 1, SUB            ~26 ms  613 KB
//   libpng level 1, all filters    ~54 ms  549 KB
//   libpng level 6, no filter      ~65 ms  511 KB
// A rendered page is mostly flat white runs and antialiased text: deflate's
// matches find the runs by themselves, while a filter turns glyph edges into
// noise and costs a pass over every row. On a page with large pictures SUB or
// UP would win a few percent in size; documents are mostly text.
constexpr int kPNGLevel = 1;
constexpr int kPNGFilters = PNG_FILTER_NONE;

std::string page_name(int index) {
    return "page " + std::to_string(index + 1);
}

} // namespace

struct hi_doc {
    // poppler reads from this buffer for the document's whole life: declared
    // before `document`, so destroyed after it.
    std::vector<uint8_t> data;
    std::unique_ptr<poppler::document> document;
    std::string description;
    hi_warnings warnings;
};

extern "C" {

hi_doc *hi_doc_open_fd(int fd, const char *description, const char *password, hi_error *err) {
    return guarded(err, description, static_cast<hi_doc *>(nullptr), [&]() -> hi_doc * {
        install_message_handlers();
        std::unique_ptr<hi_doc> doc(new hi_doc());
        doc->description = file_name(description);
        CollectWarnings collect(&doc->warnings);
        doc->data = read_all(fd, description, kMaxPDFBytes);
        if (doc->data.empty()) {
            fail(HI_E_DAMAGED, doc->description + ": the file is empty");
        }
        std::string pw = password ? password : "";
        doc->document.reset(poppler::document::load_from_raw_data(reinterpret_cast<const char *>(doc->data.data()),
                                                                  static_cast<int>(doc->data.size()), pw, pw));
        if (!doc->document) {
            std::string why = doc->warnings.items.empty() ? std::string("poppler cannot read it")
                                                          : doc->warnings.items.front();
            fail(HI_E_DAMAGED, doc->description + ": the PDF is damaged (" + why + ")");
        }
        if (doc->document->is_locked()) {
            fail(HI_E_PASSWORD, doc->description + (password ? ": the password is wrong" : ": the PDF needs a password"));
        }
        if (doc->document->pages() <= 0) {
            fail(HI_E_DAMAGED, doc->description + ": the PDF has no pages");
        }
        return doc.release();
    });
}

void hi_doc_close(hi_doc *doc) {
    try {
        CollectWarnings collect(doc ? &doc->warnings : nullptr);
        delete doc;
    } catch (...) {
    }
}

int hi_doc_page_count(hi_doc *doc, hi_error *err) {
    return guarded(err, doc ? doc->description.c_str() : nullptr, -1, [&]() -> int {
        if (!doc) {
            fail(HI_E_ARGUMENT, "no document");
        }
        CollectWarnings collect(&doc->warnings);
        return doc->document->pages();
    });
}

hi_warnings *hi_doc_warnings(hi_doc *doc) {
    return doc ? &doc->warnings : nullptr;
}

int hi_doc_render(hi_doc *doc, const hi_render_options *options, hi_render_result *result, hi_error *err) {
    return guarded(err, doc ? doc->description.c_str() : nullptr, -1, [&]() -> int {
        if (!doc || !options || !result) {
            fail(HI_E_ARGUMENT, "null argument");
        }
        std::string const &name = doc->description;
        CollectWarnings collect(&doc->warnings);
        std::memset(result, 0, sizeof(*result));
        int pages = doc->document->pages();
        if (options->page_index < 0 || options->page_index >= pages) {
            fail(HI_E_ARGUMENT, name + ": " + page_name(options->page_index) + " does not exist (the PDF has " +
                                    std::to_string(pages) + ")");
        }
        if (!(options->dpi > 0) || !std::isfinite(options->dpi) || options->max_pixels <= 0 ||
            options->fit_within < 0) {
            fail(HI_E_ARGUMENT, name + ": invalid resolution, size or limit");
        }
        if (options->format != HI_FORMAT_PNG && options->format != HI_FORMAT_JPEG) {
            fail(HI_E_ARGUMENT, name + ": unknown image format " + std::to_string(options->format));
        }
        if (options->format == HI_FORMAT_JPEG && (options->quality < 1 || options->quality > 100)) {
            fail(HI_E_ARGUMENT, name + ": JPEG quality must be 1...100, not " + std::to_string(options->quality));
        }
        std::unique_ptr<poppler::page> page(doc->document->create_page(options->page_index));
        if (!page) {
            fail(HI_E_DAMAGED, name + ": " + page_name(options->page_index) + " cannot be read");
        }
        // poppler renders the crop box, turned by the page's /Rotate.
        poppler::rectf box = page->page_rect(poppler::crop_box);
        double width_pt = std::fabs(box.width());
        double height_pt = std::fabs(box.height());
        poppler::page::orientation_enum orientation = page->orientation();
        if (orientation == poppler::page::landscape || orientation == poppler::page::seascape) {
            std::swap(width_pt, height_pt);
        }
        if (!(width_pt > 0) || !(height_pt > 0)) {
            fail(HI_E_DAMAGED, name + ": " + page_name(options->page_index) + " has an empty page box");
        }
        double dpi = options->dpi;
        double longer_pt = std::max(width_pt, height_pt);
        if (options->fit_within > 0 && longer_pt * dpi / 72.0 > options->fit_within) {
            dpi = options->fit_within * 72.0 / longer_pt;
        }
        // Checked before poppler allocates: a 200-inch page at 600 dpi would
        // ask for gigabytes.
        double width_px = std::ceil(width_pt * dpi / 72.0);
        double height_px = std::ceil(height_pt * dpi / 72.0);
        if (width_px * height_px > static_cast<double>(options->max_pixels) || width_px > 1e6 || height_px > 1e6) {
            char detail[256];
            std::snprintf(detail, sizeof(detail),
                          " would be %.0f x %.0f pixels at %g dpi (%.1f megapixels); the limit is %.1f megapixels",
                          width_px, height_px, dpi, width_px * height_px / 1e6, options->max_pixels / 1e6);
            fail(HI_E_TOO_LARGE, name + ": " + page_name(options->page_index) + detail);
        }
        // libjpeg's own limit; refused here with a message rather than failing inside the encoder.
        if (options->format == HI_FORMAT_JPEG && (width_px > 65500 || height_px > 65500)) {
            fail(HI_E_TOO_LARGE, name + ": " + page_name(options->page_index) + " is too long for JPEG (more than 65500 pixels on a side)");
        }
        poppler::page_renderer renderer;
        renderer.set_paper_color(0xffffffff);
        renderer.set_render_hint(poppler::page_renderer::antialiasing, true);
        renderer.set_render_hint(poppler::page_renderer::text_antialiasing, true);
        // RGB rows in memory order, as both encoders take them: no conversion pass.
        renderer.set_image_format(poppler::image::format_rgb24);
        poppler::image image = renderer.render_page(page.get(), dpi, dpi);
        if (!image.is_valid() || image.width() <= 0 || image.height() <= 0) {
            std::string why = doc->warnings.items.empty() ? std::string("") : " (" + doc->warnings.items.back() + ")";
            fail(HI_E_DAMAGED, name + ": poppler could not render " + page_name(options->page_index) + why);
        }
        std::unique_ptr<FdSink> sink(new FdSink);
        sink_init(sink.get(), options->output_fd);
        CodecStatus status;
        status_init(&status);
        const unsigned char *pixels = reinterpret_cast<const unsigned char *>(image.const_data());
        bool ok = options->format == HI_FORMAT_PNG
                      ? encode_png(sink.get(), pixels, image.width(), image.height(), image.bytes_per_row(), 3, dpi,
                                   kPNGLevel, kPNGFilters, &status)
                      : encode_jpeg(sink.get(), pixels, image.width(), image.height(), image.bytes_per_row(), 3, dpi,
                                    options->quality, &status);
        std::string output = file_name(options->output_description);
        if (!ok) {
            if (sink->sys_errno != 0) {
                fail(HI_E_SYSTEM, output + ": cannot write the image of " + name + ": " + std::strerror(sink->sys_errno),
                     sink->sys_errno);
            }
            fail(HI_E_INTERNAL, name + ": encoding " + page_name(options->page_index) + " failed: " + status.message);
        }
        result->width = image.width();
        result->height = image.height();
        result->dpi = dpi;
        result->bytes = static_cast<int64_t>(sink->written);
        return 0;
    });
}

} // extern "C"
