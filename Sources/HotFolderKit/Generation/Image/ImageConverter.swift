import ImageShim

/// Image files (JPEG, PNG, TIFF) as PDF documents: one page per image, each
/// page the size of the image at its resolution.
public enum ImageConverter {
    /// The limit per page; a decoded page needs up to 4 bytes per pixel.
    public static let defaultMaxPixels = 100_000_000

    /// Type, size, pages and resolution, read from the headers (a JPEG is
    /// also checked for truncation).
    public static func probe(_ fd: FileDescriptor, description: String) throws(ImageError) -> ImageInfo {
        var raw = hi_image_info()
        var error = hi_error()
        guard hi_image_probe_fd(fd.rawValue, description, &raw, &error) == 0 else { throw ImageError(error, file: description) }
        let format: ImageInfo.Format = switch Int(raw.type) {
        case Int(HI_IMAGE_PNG.rawValue): .png
        case Int(HI_IMAGE_TIFF.rawValue): .tiff
        default: .jpeg
        }
        return ImageInfo(format: format, size: PixelSize(width: Int(raw.width), height: Int(raw.height)), pages: Int(raw.pages),
                         xDPI: raw.x_dpi, yDPI: raw.y_dpi, resolutionKnown: raw.resolution_known != 0,
                         components: Int(raw.components), hasAlpha: raw.has_alpha != 0, orientation: Int(raw.orientation))
    }

    /// Writes `input` as a PDF to `output` (from its current offset) and
    /// returns the number of pages. A JPEG is embedded as it is; PNG and TIFF
    /// are decoded and compressed. After a failure the output holds a partial
    /// file and must be discarded.
    @discardableResult
    public static func convertToPDF(_ input: FileDescriptor, description: String, output: FileDescriptor,
                                    maxPixels: Int = defaultMaxPixels) throws(ImageError) -> Int {
        var ignored: [String] = []
        return try convertToPDF(input, description: description, output: output, maxPixels: maxPixels, warnings: &ignored)
    }

    /// As above; `warnings` receives what the libraries and the converter
    /// noticed (e.g. a missing resolution and the 72 dpi assumed), also on failure.
    @discardableResult
    public static func convertToPDF(_ input: FileDescriptor, description: String, output: FileDescriptor,
                                    maxPixels: Int = defaultMaxPixels, warnings: inout [String]) throws(ImageError) -> Int {
        let list = hi_warnings_new()
        defer { hi_warnings_free(list) }
        var error = hi_error()
        let pages: Int32 = output.path.withCString { outputDescription in
            var options = hi_convert_options()
            options.max_pixels = Int64(maxPixels)
            options.output_fd = output.rawValue
            options.output_description = outputDescription
            return hi_image_to_pdf_fd(input.rawValue, description, &options, list, &error)
        }
        warnings += warningTexts(list)
        guard pages >= 0 else { throw ImageError(error, file: description) }
        return Int(pages)
    }
}

/// Decoded 8-bit RGB pixels, rows without padding, alpha composited on white.
public struct RGBImage: Sendable, Equatable {
    public var size: PixelSize
    public var pixels: [UInt8]

    /// Decodes a PNG or JPEG (for checks and tests; a cut-off JPEG is refused).
    public static func decode(_ bytes: [UInt8], description: String, maxPixels: Int = ImageConverter.defaultMaxPixels) throws(ImageError) -> RGBImage {
        var error = hi_error()
        var rgb: UnsafeMutablePointer<UInt8>?
        var width: Int32 = 0
        var height: Int32 = 0
        let status = bytes.withUnsafeBufferPointer { buffer in
            hi_decode_rgb(buffer.baseAddress, buffer.count, description, Int64(maxPixels), &rgb, &width, &height, &error)
        }
        guard status == 0, let rgb else { throw ImageError(error, file: description) }
        defer { hi_free(rgb) }
        let count = Int(width) * Int(height) * 3
        return RGBImage(size: PixelSize(width: Int(width), height: Int(height)),
                        pixels: Array(UnsafeBufferPointer(start: rgb, count: count)))
    }

    /// The pixel at (x, y) from the top left.
    public func pixel(_ x: Int, _ y: Int) -> (red: UInt8, green: UInt8, blue: UInt8) {
        let i = (y * size.width + x) * 3
        guard x >= 0, y >= 0, x < size.width, y < size.height, i + 2 < pixels.count else { return (0, 0, 0) }
        return (pixels[i], pixels[i + 1], pixels[i + 2])
    }
}
