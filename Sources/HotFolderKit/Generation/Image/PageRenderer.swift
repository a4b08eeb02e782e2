import ImageShim

/// An open PDF in poppler, for rendering pages to PNG or JPEG; owned by one
/// job on one thread at a time.
public final class PageRenderer {
    private let handle: OpaquePointer
    public let file: String
    public let pageCount: Int

    /// A 64-megapixel page is A3 at 600 dpi or A0 at ~190 dpi; the renderer
    /// needs about 6 bytes per pixel while it works.
    public static let defaultMaxPixels = 64_000_000

    private init(handle: OpaquePointer, file: String, pageCount: Int) {
        self.handle = handle
        self.file = file
        self.pageCount = pageCount
    }

    deinit { hi_doc_close(handle) }

    /// Reads the whole PDF from `descriptor`; `password` nil tries no password.
    public static func open(_ descriptor: FileDescriptor, description: String, password: String?) throws(ImageError) -> PageRenderer {
        var error = hi_error()
        let opened: OpaquePointer? = if let password {
            password.withCString { hi_doc_open_fd(descriptor.rawValue, description, $0, &error) }
        } else {
            hi_doc_open_fd(descriptor.rawValue, description, nil, &error)
        }
        guard let handle = opened else { throw ImageError(error, file: description) }
        let count = hi_doc_page_count(handle, &error)
        guard count >= 0 else {
            hi_doc_close(handle)
            throw ImageError(error, file: description)
        }
        return PageRenderer(handle: handle, file: description, pageCount: Int(count))
    }

    /// Renders page `page` (0-based) at `dpi` into `output`, from its current
    /// offset. `fitWithin` scales the page down (never up) so its longer side
    /// is at most that many pixels; a page above `maxPixels` is refused before
    /// anything is allocated. `quality` (1...100) applies to JPEG.
    @discardableResult
    public func render(page: Int, type: ImageType, dpi: Double, quality: Int = 85, fitWithin: Int? = nil,
                       maxPixels: Int = PageRenderer.defaultMaxPixels, to output: FileDescriptor) throws(ImageError) -> RenderedPage {
        guard let index = Int32(exactly: page), (0..<pageCount).contains(page) else {
            throw ImageError(.invalidArgument, "page \(page + 1) does not exist (the PDF has \(pageCount))", file: file)
        }
        var error = hi_error()
        var result = hi_render_result()
        let status: Int32 = output.path.withCString { description in
            var options = hi_render_options()
            options.page_index = index
            options.format = Int32(type == .png ? HI_FORMAT_PNG.rawValue : HI_FORMAT_JPEG.rawValue)
            options.dpi = dpi
            options.quality = Int32(clamping: quality)
            options.fit_within = Int32(clamping: max(fitWithin ?? 0, 0))
            options.max_pixels = Int64(maxPixels)
            options.output_fd = output.rawValue
            options.output_description = description
            return hi_doc_render(handle, &options, &result, &error)
        }
        guard status == 0 else { throw ImageError(error, file: file) }
        return RenderedPage(size: PixelSize(width: Int(result.width), height: Int(result.height)), dpi: result.dpi, bytes: Int(result.bytes))
    }

    /// poppler's complaints about the document so far (it renders what it can).
    public var warnings: [String] { warningTexts(hi_doc_warnings(handle)) }
}
