/// Width and height in pixels.
public struct PixelSize: Sendable, Equatable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public var description: String { "\(width)x\(height)" }
}

/// What a probe finds in an image file, without decoding its pixels.
public struct ImageInfo: Sendable, Equatable {
    public enum Format: String, Sendable, Codable, CaseIterable {
        case jpeg, png, tiff
    }

    public var format: Format
    /// Of the first page, as stored (before any EXIF orientation).
    public var size: PixelSize
    /// TIFF directories (thumbnails not counted); 1 for JPEG and PNG.
    public var pages: Int
    /// The resolution the PDF page gets: the file's, or 72 dpi when it has none.
    public var xDPI: Double
    public var yDPI: Double
    public var resolutionKnown: Bool
    /// 1 gray, 3 RGB, 4 CMYK; alpha not counted.
    public var components: Int
    public var hasAlpha: Bool
    /// EXIF/TIFF orientation 1...8 (1: as stored).
    public var orientation: Int
}

/// One rendered page.
public struct RenderedPage: Sendable, Equatable {
    public var size: PixelSize
    /// The resolution used: lower than asked when `fitWithin` scaled the page down.
    public var dpi: Double
    /// Encoded bytes written to the output.
    public var bytes: Int
}
