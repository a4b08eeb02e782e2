import Foundation
import PDFShim

/// What generation needs to know about a document before it starts.
public struct PDFInfo: Sendable, Equatable {
    public var pages: Int
    public var encrypted: Bool
    public var allowPrintLowResolution: Bool
    public var allowPrintHighResolution: Bool
    public var allowModifyAnnotations: Bool
    public var hasForm: Bool
    public var needAppearances: Bool
    public var signed: Bool
    public var annotations: Int
}

/// An open PDF in libqpdf, owned by one job on one thread at a time.
public final class PDFDocument {
    private let handle: OpaquePointer
    public let file: String

    private init(handle: OpaquePointer, file: String) {
        self.handle = handle
        self.file = file
    }

    deinit { hf_doc_close(handle) }

    /// Tunes the C allocator for generating many documents in this process.
    public static func tuneAllocator() { hf_tune_allocator() }

    /// Opens the PDF read from `descriptor`; `password` nil tries no password.
    public static func open(_ descriptor: FileDescriptor, description: String, password: String?) throws(PDFError) -> PDFDocument {
        var error = hf_error()
        let handle: OpaquePointer? = if let password {
            password.withCString { hf_doc_open_fd(descriptor.rawValue, description, $0, &error) }
        } else {
            hf_doc_open_fd(descriptor.rawValue, description, nil, &error)
        }
        guard let handle else { throw PDFError(error, file: description) }
        return PDFDocument(handle: handle, file: description)
    }

    public func info() throws(PDFError) -> PDFInfo {
        var raw = hf_info()
        var error = hf_error()
        guard hf_doc_info(handle, &raw, &error) == 0 else { throw PDFError(error, file: file) }
        return PDFInfo(
            pages: Int(raw.pages), encrypted: raw.encrypted != 0,
            allowPrintLowResolution: raw.allow_print_low != 0, allowPrintHighResolution: raw.allow_print_high != 0,
            allowModifyAnnotations: raw.allow_modify_annotations != 0, hasForm: raw.has_form != 0,
            needAppearances: raw.need_appearances != 0, signed: raw.signed_form != 0,
            annotations: Int(raw.total_annotations))
    }

    /// Annotations on a page (0-based), not counting links and popups.
    public func annotationCount(page: Int) throws(PDFError) -> Int {
        var error = hf_error()
        let n = hf_doc_page_annotation_count(handle, Int32(page), &error)
        guard n >= 0 else { throw PDFError(error, file: file) }
        return Int(n)
    }

    /// The Title from the document information dictionary, if any.
    public func title() throws(PDFError) -> String? {
        var error = hf_error()
        var buffer = [CChar](repeating: 0, count: 1024)
        var length = hf_doc_title(handle, &buffer, buffer.count, &error)
        guard length >= 0 else { throw PDFError(error, file: file) }
        if length >= buffer.count {
            buffer = [CChar](repeating: 0, count: length + 1)
            length = hf_doc_title(handle, &buffer, buffer.count, &error)
            guard length >= 0 else { throw PDFError(error, file: file) }
        }
        let title = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return title.isEmpty ? nil : title
    }

    public enum AnnotationMode: Int32, Sendable {
        case embed = 0, flatten = 1, flattenForPrint = 2, remove = 3
    }

    /// Applies the page selection (0-based indexes, nil for all), the
    /// annotation mode and the title, appends every page of the PDF in
    /// `append` (e.g. summary pages), and writes the result, decrypted, to `output`.
    public func generate(pages: [Int]?, annotations: AnnotationMode, title: String?, output: FileDescriptor,
                         append: FileDescriptor? = nil) throws(PDFError) {
        var error = hf_error()
        let pageList = try pageIndexes(pages)
        let status: Int32 = output.path.withCString { description in
            withOptionalCString(title) { titlePointer in
                withOptionalCString(append?.path) { appendDescription in
                    withOptionalBuffer(pageList) { pagesPointer, count in
                        var options = hf_generate_options()
                        options.pages = pagesPointer
                        options.page_count = Int32(count)
                        options.annotations = annotations.rawValue
                        options.title = titlePointer
                        options.output_fd = output.rawValue
                        options.output_description = description
                        if let append {
                            options.has_append = 1
                            options.append_fd = append.rawValue
                            options.append_description = appendDescription
                        }
                        return hf_doc_generate(handle, &options, &error)
                    }
                }
            }
        }
        guard status == 0 else { throw PDFError(error, file: file) }
    }

    /// The annotations people wrote on the given pages (0-based indexes, nil
    /// for all), in page order: no links, popups or form fields. Call before
    /// `generate`, which changes the document.
    public func annotations(pages: [Int]?) throws(PDFError) -> [AnnotationRecord] {
        var error = hf_error()
        var json: UnsafeMutablePointer<CChar>?
        let pageList = try pageIndexes(pages)
        let count = withOptionalBuffer(pageList) { pagesPointer, n in
            hf_doc_annotations(handle, pagesPointer, Int32(n), &json, &error)
        }
        defer { hf_free(json) }
        guard count >= 0, let json else { throw PDFError(error, file: file) }
        let bytes = Data(bytes: json, count: strlen(json))
        do {
            return try JSONDecoder().decode([AnnotationRecord].self, from: bytes)
        } catch {
            throw PDFError(kind: .engine, message: "the annotation list could not be read: \(error)", file: file)
        }
    }

    /// The size of a page (0-based) as a viewer shows it, in points.
    public func pageSize(_ index: Int) throws(PDFError) -> (width: Double, height: Double) {
        var error = hf_error()
        var width = 0.0
        var height = 0.0
        guard hf_doc_page_size(handle, try pageIndex(index), &width, &height, &error) == 0 else {
            throw PDFError(error, file: file)
        }
        return (width, height)
    }

    /// Int32(_:) traps on overflow; an index from a page range must not.
    private func pageIndex(_ page: Int) throws(PDFError) -> Int32 {
        guard let index = Int32(exactly: page) else {
            throw PDFError(kind: .engine, message: "page index \(page) out of range", file: file)
        }
        return index
    }

    private func pageIndexes(_ pages: [Int]?) throws(PDFError) -> [Int32]? {
        guard let pages else { return nil }
        var result: [Int32] = []
        result.reserveCapacity(pages.count)
        for page in pages { result.append(try pageIndex(page)) }
        return result
    }

    /// Warnings so far: qpdf's recoveries and the shim's dropped annotations.
    public var warnings: [String] {
        let count = hf_doc_warning_count(handle)
        return (0..<count).map { String(cString: hf_doc_warning(handle, $0)) }
    }
}

private func withOptionalCString<R>(_ s: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let s else { return body(nil) }
    return s.withCString { body($0) }
}

private func withOptionalBuffer<R>(_ a: [Int32]?, _ body: (UnsafePointer<Int32>?, Int) -> R) -> R {
    guard let a else { return body(nil, 0) }
    return a.withUnsafeBufferPointer { body($0.baseAddress, $0.count) }
}
