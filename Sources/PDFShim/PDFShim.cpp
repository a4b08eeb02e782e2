#include "PDFShim.h"
#include "AnnotationText.h"

#include <qpdf/Constants.h>
#include <qpdf/Pipeline.hh>
#include <qpdf/QPDF.hh>
#include <qpdf/QPDFAcroFormDocumentHelper.hh>
#include <qpdf/QPDFAnnotationObjectHelper.hh>
#include <qpdf/QPDFExc.hh>
#include <qpdf/QPDFPageDocumentHelper.hh>
#include <qpdf/QPDFPageObjectHelper.hh>
#include <qpdf/QPDFSystemError.hh>
#include <qpdf/QPDFWriter.hh>

#include <malloc.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <utility>
#include <set>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

constexpr long kMemoryReadLimit = 16L << 20;

// QPDFWriter's output, written to a descriptor in large pieces. Through a
// FILE* every stream's end flushed: a 1-page PDF took six write calls, a
// 50-page one over a hundred.
class FdOutput : public Pipeline {
  public:
    explicit FdOutput(int fd) : Pipeline("output", nullptr), fd_(fd) { buffer_.reserve(kChunk); }

    void write(unsigned char const *data, size_t len) override {
        if (buffer_.size() + len > kChunk) {
            drain();
        }
        if (len >= kChunk) {
            put(data, len);
        } else {
            buffer_.insert(buffer_.end(), data, data + len);
        }
    }

    // QPDFWriter "finishes" its pipeline stack at the end of every stream,
    // which reaches this last stage too: that is no reason to write yet.
    void finish() override {}

    // Writes what is buffered; called once QPDFWriter is done.
    void flush() { drain(); }

  private:
    static constexpr size_t kChunk = 1 << 20;

    void drain() {
        put(buffer_.data(), buffer_.size());
        buffer_.clear();
    }

    void put(unsigned char const *data, size_t len) {
        while (len > 0) {
            ssize_t n = ::write(fd_, data, len);
            if (n < 0) {
                if (errno == EINTR) {
                    continue;
                }
                throw QPDFSystemError("writing output", errno);
            }
            data += n;
            len -= static_cast<size_t>(n);
        }
    }

    int fd_;
    std::vector<unsigned char> buffer_;
};

// A document with thousands of broken objects yields thousands of warnings;
// the job log needs the first few and a count.
constexpr size_t kMaxWarnings = 50;

}

struct hf_doc {
    // Small files are parsed from memory: qpdf's stdio input costs hundreds of
    // seek calls per document. Declared before `pdf`, so it outlives it.
    std::string memory;
    QPDF pdf;
    std::string description;
    std::vector<std::string> warnings;
    size_t suppressed = 0;
    // qpdf turns an allocation failure while reading an object into a warning
    // and goes on with the object missing; a result made that way is damaged,
    // so running out of memory is an error however qpdf reported it.
    bool memory_exhausted = false;

    void note(std::string const &w) {
        if (w.find("bad_alloc") != std::string::npos || w.find("out of memory") != std::string::npos ||
            w.find("Cannot allocate memory") != std::string::npos) {
            memory_exhausted = true;
        }
        if (warnings.size() < kMaxWarnings) {
            warnings.push_back(w);
        } else {
            ++suppressed;
        }
    }

    void collect_qpdf_warnings() {
        for (auto const &w : pdf.getWarnings()) {
            note(w.what());
        }
    }
};

namespace {

void set_error(hf_error *err, int status, int sys_errno, std::string const &msg) {
    if (!err) {
        return;
    }
    err->status = status;
    err->sys_errno = sys_errno;
    std::snprintf(err->message, sizeof(err->message), "%s", msg.c_str());
}

void clear_error(hf_error *err) {
    set_error(err, HF_OK, 0, "");
}

// One guard per exported function: every exception becomes an hf_error.
template <typename F>
auto guarded(hf_error *err, decltype(std::declval<F>()()) failure, F &&body) -> decltype(body()) {
    clear_error(err);
    try {
        return body();
    } catch (QPDFExc &e) {
        int status = HF_E_DAMAGED;
        switch (e.getErrorCode()) {
        case qpdf_e_password: status = HF_E_PASSWORD; break;
        case qpdf_e_system: status = HF_E_SYSTEM; break;
        case qpdf_e_unsupported: status = HF_E_UNSUPPORTED; break;
        default: break;
        }
        set_error(err, status, 0, e.what());
    } catch (QPDFSystemError &e) {
        set_error(err, HF_E_SYSTEM, e.getErrno(), e.what());
    } catch (std::bad_alloc &) {
        set_error(err, HF_E_INTERNAL, ENOMEM, "out of memory");
    } catch (std::exception &e) {
        set_error(err, HF_E_DAMAGED, 0, e.what());
    } catch (...) {
        set_error(err, HF_E_INTERNAL, 0, "unknown exception in the PDF engine");
    }
    return failure;
}

bool is_counted_annotation(QPDFAnnotationObjectHelper &a) {
    std::string subtype = a.getSubtype();
    return subtype != "/Link" && subtype != "/Popup";
}

std::string describe(QPDFAnnotationObjectHelper &a) {
    std::string subtype = a.getSubtype();
    if (!subtype.empty() && subtype[0] == '/') {
        subtype.erase(0, 1);
    }
    return subtype.empty() ? std::string("untyped") : subtype;
}

void replace_annotations(QPDFPageObjectHelper &page, std::vector<QPDFObjectHandle> const &keep) {
    QPDFObjectHandle page_oh = page.getObjectHandle();
    if (keep.empty()) {
        page_oh.removeKey("/Annots");
    } else {
        // A fresh direct array: pages may share one indirect /Annots array,
        // and each page decides for itself.
        page_oh.replaceKey("/Annots", QPDFObjectHandle::newArray(keep));
    }
}

// Bakes annotation appearances into page content. for_print selects the
// annotations a printer shows (print flag set, not hidden); otherwise the ones a
// screen shows (not hidden, not NoView), and links stay live annotations.
void flatten(hf_doc *doc, bool for_print) {
    QPDF &pdf = doc->pdf;
    QPDFAcroFormDocumentHelper afdh(pdf);
    if (afdh.getNeedAppearances()) {
        // Values were changed without new appearances; without this nothing
        // of the form would be flattened.
        afdh.generateAppearancesIfNeeded();
    }
    QPDFPageDocumentHelper dh(pdf);
    dh.pushInheritedAttributesToPage();
    int const forbidden = an_invisible | an_hidden | (for_print ? 0 : an_no_view);
    int page_number = 0;
    for (auto &page : dh.getAllPages()) {
        ++page_number;
        std::vector<QPDFAnnotationObjectHelper> annots = page.getAnnotations();
        if (annots.empty()) {
            continue;
        }
        QPDFObjectHandle page_oh = page.getObjectHandle();
        QPDFObjectHandle resources = page.getAttribute("/Resources", true);
        if (!resources.isDictionary()) {
            resources = QPDFObjectHandle::newDictionary();
            page_oh.replaceKey("/Resources", resources);
        }
        int rotate = 0;
        QPDFObjectHandle rotate_obj = page_oh.getKey("/Rotate");
        if (rotate_obj.isInteger()) {
            rotate = rotate_obj.getIntValueAsInt();
        }
        std::set<std::string> names = resources.getResourceNames();
        int next_fx = 1;
        std::vector<QPDFObjectHandle> keep;
        std::string content;
        for (auto &aoh : annots) {
            std::string subtype = aoh.getSubtype();
            int flags = aoh.getFlags();
            if (subtype == "/Popup") {
                continue; // drawn by viewers for its parent; never page content
            }
            if (subtype == "/Link" && !for_print) {
                keep.push_back(aoh.getObjectHandle());
                continue;
            }
            if ((flags & forbidden) != 0 || (for_print && (flags & an_print) == 0)) {
                continue; // not shown in this mode, so not part of the flattened page
            }
            QPDFObjectHandle as = aoh.getAppearanceStream("/N");
            if (!as.isStream()) {
                QPDFObjectHandle ap = aoh.getAppearanceDictionary();
                if (ap.isDictionary() && ap.getKey("/N").isDictionary()) {
                    continue; // a state with no drawing (e.g. an unchecked box)
                }
                if (subtype != "/Link") {
                    doc->note("page " + std::to_string(page_number) + ": " + describe(aoh) +
                              " annotation has no appearance stream and was dropped");
                }
                continue;
            }
            if (subtype == "/Widget") {
                // Appearance streams may use fonts from the form's /DR.
                QPDFObjectHandle as_dict = as.getDict();
                QPDFObjectHandle as_resources = as_dict.getKey("/Resources");
                if (as_resources.isIndirect()) {
                    as_dict.replaceKey("/Resources", as_resources.shallowCopy());
                    as_resources = as_dict.getKey("/Resources");
                } else if (!as_resources.isDictionary()) {
                    as_dict.replaceKey("/Resources", QPDFObjectHandle::newDictionary());
                    as_resources = as_dict.getKey("/Resources");
                }
                QPDFFormFieldObjectHelper ff = afdh.getFieldForAnnotation(aoh);
                QPDFObjectHandle dr = ff.getDefaultResources();
                if (dr.isDictionary()) {
                    as_resources.mergeResources(dr);
                }
            }
            std::string name = resources.getUniqueResourceName("/Fxo", next_fx, &names);
            std::string piece = aoh.getPageContentForAppearance(name, rotate, 0, 0);
            if (!piece.empty()) {
                if (!resources.getKey("/XObject").isDictionary()) {
                    resources.replaceKey("/XObject", QPDFObjectHandle::newDictionary());
                }
                resources.getKey("/XObject").replaceKey(name, as);
                names.insert(name);
                ++next_fx;
            }
            content += piece;
        }
        replace_annotations(page, keep);
        if (!content.empty()) {
            page.addPageContents(pdf.newStream("q\n"), true);
            page.addPageContents(pdf.newStream("\nQ\n" + content), false);
        }
    }
    // Every widget is now page content or gone; a form left behind would show
    // fields that no longer exist.
    pdf.getRoot().removeKey("/AcroForm");
}

void remove_annotations(hf_doc *doc) {
    QPDFPageDocumentHelper dh(doc->pdf);
    for (auto &page : dh.getAllPages()) {
        page.getObjectHandle().removeKey("/Annots");
    }
    doc->pdf.getRoot().removeKey("/AcroForm");
}

void keep_pages(hf_doc *doc, const int *pages, int count) {
    QPDFPageDocumentHelper dh(doc->pdf);
    std::vector<QPDFPageObjectHelper> all = dh.getAllPages();
    std::vector<bool> wanted(all.size(), false);
    for (int i = 0; i < count; ++i) {
        if (pages[i] < 0 || static_cast<size_t>(pages[i]) >= all.size()) {
            throw std::invalid_argument("page index " + std::to_string(pages[i]) + " out of range");
        }
        wanted[static_cast<size_t>(pages[i])] = true;
    }
    for (size_t i = 0; i < all.size(); ++i) {
        if (!wanted[i]) {
            dh.removePage(all[i]);
        }
    }
}

void set_title(QPDF &pdf, char const *title) {
    QPDFObjectHandle trailer = pdf.getTrailer();
    QPDFObjectHandle info = trailer.getKey("/Info");
    if (!info.isDictionary()) {
        info = pdf.makeIndirectObject(QPDFObjectHandle::newDictionary());
        trailer.replaceKey("/Info", info);
    }
    info.replaceKey("/Title", QPDFObjectHandle::newUnicodeString(title));
}

// Parses the PDF read from fd into pdf. memory receives a small file's bytes
// and must outlive pdf.
void load(QPDF &pdf, std::string &memory, int fd, char const *description, char const *password) {
    struct stat st;
    if (fstat(fd, &st) != 0) {
        throw QPDFSystemError("fstat", errno);
    }
    if (S_ISREG(st.st_mode) && st.st_size <= kMemoryReadLimit) {
        memory.resize(static_cast<size_t>(st.st_size));
        size_t filled = 0;
        while (filled < memory.size()) {
            ssize_t n = pread(fd, &memory[filled], memory.size() - filled, static_cast<off_t>(filled));
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n < 0) {
                throw QPDFSystemError("read", errno);
            }
            if (n == 0) {
                memory.resize(filled); // shrank while being read
                break;
            }
            filled += static_cast<size_t>(n);
        }
        pdf.processMemoryFile(description, memory.data(), memory.size(), password);
    } else {
        int copy = dup(fd);
        if (copy < 0) {
            throw QPDFSystemError("dup", errno);
        }
        FILE *file = fdopen(copy, "rb");
        if (!file) {
            int e = errno;
            close(copy);
            throw QPDFSystemError("fdopen", e);
        }
        if (std::fseek(file, 0, SEEK_SET) != 0) {
            int e = errno;
            std::fclose(file);
            throw QPDFSystemError("fseek", e);
        }
        pdf.processFile(description, file, true, password);
    }
}

// The UTF-8 of a PDF text string, or nothing when obj is not a string.
bool text_string(QPDFObjectHandle obj, std::string &out) {
    if (!obj.isString()) {
        return false;
    }
    std::string const raw = obj.getStringValue();
    bool const has_bom = raw.size() >= 2 && ((raw[0] == '\xFE' && raw[1] == '\xFF') || (raw[0] == '\xFF' && raw[1] == '\xFE'));
    if (raw.size() >= 3 && raw.compare(0, 3, "\xEF\xBB\xBF") == 0 && hf::is_valid_utf8(raw)) {
        out = raw.substr(3); // PDF 2.0's UTF-8 text string
        return true;
    }
    bool const ascii = std::all_of(raw.begin(), raw.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    if (!has_bom && !ascii && hf::is_valid_utf8(raw)) {
        // Some producers write UTF-8 without the marker; read as PDFDocEncoding
        // it would come out as mojibake ("JÃ¼rgen"), and PDFDocEncoding text
        // that happens to be valid UTF-8 is vanishingly rare.
        out = raw;
        return true;
    }
    out = obj.getUTF8Value();
    return true;
}

bool is_reviewer_annotation(std::string const &subtype) {
    // Links are navigation, popups are the windows of their parents, widgets
    // are form fields: none of them is something a reviewer wrote.
    return subtype != "/Link" && subtype != "/Popup" && subtype != "/Widget";
}

void append_annotation_json(std::string &json, int page_number, QPDFObjectHandle annot) {
    std::string type = annot.getKey("/Subtype").isName() ? annot.getKey("/Subtype").getName() : std::string();
    if (!type.empty() && type[0] == '/') {
        type.erase(0, 1);
    }
    if (type.empty()) {
        type = "Unknown";
    }
    if (json.size() > 1) {
        json += ',';
    }
    json += "{\"page\":" + std::to_string(page_number) + ",\"type\":";
    hf::append_json_string(json, type);
    std::string value;
    if (text_string(annot.getKey("/T"), value)) {
        json += ",\"author\":";
        hf::append_json_string(json, value);
    }
    if (text_string(annot.getKey("/Subj"), value)) {
        json += ",\"subject\":";
        hf::append_json_string(json, value);
    }
    QPDFObjectHandle date = annot.getKey("/M");
    if (!date.isString()) {
        date = annot.getKey("/CreationDate");
    }
    if (text_string(date, value)) {
        std::string iso;
        json += ",\"date\":";
        // Free-form dates ("Tuesday 3 May") exist; they are kept as written.
        hf::append_json_string(json, hf::pdf_date_to_iso8601(value, iso) ? iso : value);
    }
    if (text_string(annot.getKey("/Contents"), value)) {
        json += ",\"text\":";
        hf::append_json_string(json, value);
    }
    QPDFObjectHandle flags = annot.getKey("/F");
    if (flags.isInteger()) {
        json += ",\"flags\":" + std::to_string(flags.getIntValue());
    }
    json += '}';
}

bool rectangle(QPDFObjectHandle box, QPDFObjectHandle::Rectangle &r) {
    if (!box.isRectangle()) {
        return false;
    }
    r = box.getArrayAsRectangle();
    // Boxes may name any two opposite corners.
    if (r.llx > r.urx) {
        std::swap(r.llx, r.urx);
    }
    if (r.lly > r.ury) {
        std::swap(r.lly, r.ury);
    }
    return std::isfinite(r.llx) && std::isfinite(r.lly) && std::isfinite(r.urx) && std::isfinite(r.ury) &&
           r.urx > r.llx && r.ury > r.lly;
}

void append_pages(hf_doc *doc, int fd, char const *description) {
    std::string memory;
    QPDF extra;
    extra.setSuppressWarnings(true);
    extra.setAttemptRecovery(true);
    // Copies stream data when a page is added, so neither `extra` nor
    // `memory` has to outlive this function; appended documents are small.
    extra.setImmediateCopyFrom(true);
    std::string const name = description ? description : "appended pages";
    load(extra, memory, fd, name.c_str(), nullptr);
    QPDFPageDocumentHelper target(doc->pdf);
    for (auto &page : QPDFPageDocumentHelper(extra).getAllPages()) {
        // addPage copies a page of another document with everything it uses.
        target.addPage(page, false);
    }
    for (auto const &w : extra.getWarnings()) {
        doc->note(name + ": " + w.what());
    }
}

} // namespace

extern "C" {

hf_doc *hf_doc_open_fd(int fd, const char *description, const char *password, hf_error *err) {
    return guarded(err, static_cast<hf_doc *>(nullptr), [&]() -> hf_doc * {
        if (!description) {
            throw std::invalid_argument("no description");
        }
        std::unique_ptr<hf_doc> doc(new hf_doc());
        doc->description = description;
        doc->pdf.setSuppressWarnings(true);
        doc->pdf.setAttemptRecovery(true);
        load(doc->pdf, doc->memory, fd, description, password);
        // Parsing is lazy: touching the page tree now turns a broken one into an
        // open error rather than a surprise in the middle of generation.
        doc->pdf.getAllPages();
        doc->collect_qpdf_warnings();
        if (doc->memory_exhausted) {
            throw std::bad_alloc();
        }
        return doc.release();
    });
}

void hf_doc_close(hf_doc *doc) {
    try {
        delete doc;
    } catch (...) {
    }
}

int hf_doc_info(hf_doc *doc, hf_info *out, hf_error *err) {
    return guarded(err, -1, [&]() -> int {
        if (!doc || !out) {
            throw std::invalid_argument("null argument");
        }
        std::memset(out, 0, sizeof(*out));
        QPDF &pdf = doc->pdf;
        out->pages = static_cast<int>(pdf.getAllPages().size());
        out->encrypted = pdf.isEncrypted();
        out->allow_print_low = pdf.allowPrintLowRes();
        out->allow_print_high = pdf.allowPrintHighRes();
        out->allow_modify_annotations = pdf.allowModifyAnnotation();
        out->allow_extract = pdf.allowExtractAll();
        QPDFAcroFormDocumentHelper afdh(pdf);
        out->has_form = afdh.hasAcroForm();
        out->need_appearances = afdh.getNeedAppearances();
        if (out->has_form) {
            for (auto &field : afdh.getFormFields()) {
                if (field.getFieldType() == "/Sig") {
                    out->signed_form = 1;
                    break;
                }
            }
        }
        QPDFPageDocumentHelper dh(pdf);
        for (auto &page : dh.getAllPages()) {
            for (auto &a : page.getAnnotations()) {
                if (is_counted_annotation(a)) {
                    ++out->total_annotations;
                }
            }
        }
        doc->collect_qpdf_warnings();
        return 0;
    });
}

int hf_doc_page_annotation_count(hf_doc *doc, int page_index, hf_error *err) {
    return guarded(err, -1, [&]() -> int {
        if (!doc) {
            throw std::invalid_argument("null document");
        }
        std::vector<QPDFObjectHandle> const &pages = doc->pdf.getAllPages();
        if (page_index < 0 || static_cast<size_t>(page_index) >= pages.size()) {
            throw std::invalid_argument("page index out of range");
        }
        QPDFPageObjectHelper page(pages[static_cast<size_t>(page_index)]);
        int count = 0;
        for (auto &a : page.getAnnotations()) {
            if (is_counted_annotation(a)) {
                ++count;
            }
        }
        return count;
    });
}

long hf_doc_title(hf_doc *doc, char *buf, size_t capacity, hf_error *err) {
    return guarded(err, -1L, [&]() -> long {
        if (!doc) {
            throw std::invalid_argument("null document");
        }
        std::string title;
        QPDFObjectHandle info = doc->pdf.getTrailer().getKey("/Info");
        if (info.isDictionary()) {
            QPDFObjectHandle t = info.getKey("/Title");
            if (t.isString()) {
                title = t.getUTF8Value();
            }
        }
        if (buf && capacity > 0) {
            size_t n = title.size() < capacity - 1 ? title.size() : capacity - 1;
            std::memcpy(buf, title.data(), n);
            buf[n] = '\0';
        }
        return static_cast<long>(title.size());
    });
}

int hf_doc_generate(hf_doc *doc, const hf_generate_options *options, hf_error *err) {
    return guarded(err, -1, [&]() -> int {
        if (!doc || !options) {
            throw std::invalid_argument("null argument");
        }
        if (options->pages) {
            keep_pages(doc, options->pages, options->page_count);
        }
        switch (options->annotations) {
        case HF_ANNOT_EMBED: break;
        case HF_ANNOT_FLATTEN: flatten(doc, false); break;
        case HF_ANNOT_FLATTEN_PRINT: flatten(doc, true); break;
        case HF_ANNOT_REMOVE: remove_annotations(doc); break;
        default: throw std::invalid_argument("unknown annotation mode");
        }
        if (options->title) {
            set_title(doc->pdf, options->title);
        }
        if (options->has_append) {
            // After flattening, which must not touch the appended pages.
            append_pages(doc, options->append_fd, options->append_description);
        }
        FdOutput out(options->output_fd);
        QPDFWriter w(doc->pdf);
        w.setOutputPipeline(&out);
        w.setPreserveEncryption(false);
        w.write();
        out.flush();
        doc->collect_qpdf_warnings();
        if (doc->memory_exhausted) {
            throw std::bad_alloc();
        }
        return 0;
    });
}

int hf_doc_annotations(hf_doc *doc, const int *pages, int page_count, char **json_out, hf_error *err) {
    if (json_out) {
        *json_out = nullptr;
    }
    return guarded(err, -1, [&]() -> int {
        if (!doc || !json_out || page_count < 0 || (page_count > 0 && !pages)) {
            throw std::invalid_argument("invalid argument to hf_doc_annotations");
        }
        std::vector<QPDFObjectHandle> const &all = doc->pdf.getAllPages();
        std::vector<size_t> wanted;
        if (pages) {
            for (int i = 0; i < page_count; ++i) {
                if (pages[i] < 0 || static_cast<size_t>(pages[i]) >= all.size()) {
                    throw std::invalid_argument("page index " + std::to_string(pages[i]) + " out of range");
                }
                wanted.push_back(static_cast<size_t>(pages[i]));
            }
        } else {
            for (size_t i = 0; i < all.size(); ++i) {
                wanted.push_back(i);
            }
        }
        std::string json = "[";
        int count = 0;
        for (size_t index : wanted) {
            QPDFPageObjectHelper page(all[index]);
            for (auto &a : page.getAnnotations()) {
                if (!is_reviewer_annotation(a.getSubtype())) {
                    continue;
                }
                append_annotation_json(json, static_cast<int>(index) + 1, a.getObjectHandle());
                ++count;
            }
        }
        json += ']';
        doc->collect_qpdf_warnings();
        char *copy = static_cast<char *>(std::malloc(json.size() + 1));
        if (!copy) {
            throw std::bad_alloc();
        }
        std::memcpy(copy, json.c_str(), json.size() + 1);
        *json_out = copy;
        return count;
    });
}

void hf_free(void *p) { std::free(p); }

int hf_doc_page_size(hf_doc *doc, int page_index, double *width, double *height, hf_error *err) {
    return guarded(err, -1, [&]() -> int {
        if (!doc || !width || !height) {
            throw std::invalid_argument("null argument");
        }
        std::vector<QPDFObjectHandle> const &all = doc->pdf.getAllPages();
        if (page_index < 0 || static_cast<size_t>(page_index) >= all.size()) {
            throw std::invalid_argument("page index " + std::to_string(page_index) + " out of range");
        }
        QPDFPageObjectHelper page(all[static_cast<size_t>(page_index)]);
        QPDFObjectHandle::Rectangle media;
        if (!rectangle(page.getMediaBox(), media)) {
            throw std::runtime_error(doc->description + ": page " + std::to_string(page_index + 1) +
                                     " has no valid MediaBox");
        }
        QPDFObjectHandle::Rectangle visible = media;
        QPDFObjectHandle::Rectangle crop;
        if (rectangle(page.getAttribute("/CropBox", false), crop)) {
            // Viewers show the part of the CropBox inside the MediaBox.
            QPDFObjectHandle::Rectangle both(std::max(crop.llx, media.llx), std::max(crop.lly, media.lly),
                                             std::min(crop.urx, media.urx), std::min(crop.ury, media.ury));
            if (both.urx > both.llx && both.ury > both.lly) {
                visible = both;
            }
        }
        double unit = 1.0;
        QPDFObjectHandle user_unit = page.getObjectHandle().getKey("/UserUnit");
        if (user_unit.isNumber() && user_unit.getNumericValue() > 0 && std::isfinite(user_unit.getNumericValue())) {
            unit = user_unit.getNumericValue();
        }
        int rotate = 0;
        QPDFObjectHandle rotate_obj = page.getAttribute("/Rotate", false);
        if (rotate_obj.isInteger()) {
            rotate = static_cast<int>(((rotate_obj.getIntValue() % 360) + 360) % 360);
        }
        double w = (visible.urx - visible.llx) * unit;
        double h = (visible.ury - visible.lly) * unit;
        if (rotate == 90 || rotate == 270) {
            std::swap(w, h);
        }
        *width = w;
        *height = h;
        return 0;
    });
}

void hf_tune_allocator(void) {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    mallopt(M_TOP_PAD, 16 << 20);
}

size_t hf_doc_warning_count(hf_doc *doc) {
    try {
        if (!doc) {
            return 0;
        }
        if (doc->suppressed > 0) {
            doc->warnings.push_back("... and " + std::to_string(doc->suppressed) + " more warnings");
            doc->suppressed = 0;
        }
        return doc->warnings.size();
    } catch (...) {
        return 0;
    }
}

const char *hf_doc_warning(hf_doc *doc, size_t index) {
    if (!doc || index >= doc->warnings.size()) {
        return "";
    }
    return doc->warnings[index].c_str();
}

} // extern "C"
