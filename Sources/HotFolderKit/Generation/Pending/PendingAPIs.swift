// TEMPORARY: stand-ins for the image and summary APIs being built elsewhere;
// removed when they land.
public struct ImageError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
public struct ImageInfo: Sendable { public var pages: Int }
public final class PageRenderer {
    public let pageCount: Int = 0
    public static func open(_ fd: FileDescriptor, description: String, password: String?) throws(ImageError) -> PageRenderer { throw ImageError(message: "pending") }
    @discardableResult
    public func render(page: Int, type: ImageType, dpi: Double, quality: Int, fitWithin: Int? = nil, to output: FileDescriptor) throws(ImageError) -> (width: Int, height: Int) { throw ImageError(message: "pending") }
}
public enum ImageConverter {
    public static func probe(_ fd: FileDescriptor, description: String) throws(ImageError) -> ImageInfo { throw ImageError(message: "pending") }
    public static func convertToPDF(_ input: FileDescriptor, description: String, output: FileDescriptor) throws(ImageError) -> Int { throw ImageError(message: "pending") }
}
public struct AnnotationRecord: Sendable, Codable, Equatable {
    public var page: Int
    public var type: String
    public var author: String?
    public var subject: String?
    public var date: String?
    public var text: String?
}
public struct SummaryError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
public struct SummaryResult: Sendable { public var pages: Int; public var unshownCharacters: Int }
public enum SummaryPages {
    public static func write(_ records: [AnnotationRecord], title: String, pageWidth: Double, pageHeight: Double, to output: FileDescriptor) throws(SummaryError) -> SummaryResult { throw SummaryError(message: "pending") }
}
extension PDFDocument {
    public func annotations(pages: [Int]?) throws(PDFError) -> [AnnotationRecord] { [] }
    public func pageSize(_ index: Int) throws(PDFError) -> (width: Double, height: Double) { (595, 842) }
    public func generate(pages: [Int]?, annotations: AnnotationMode, title: String?, output: FileDescriptor, append: FileDescriptor?) throws(PDFError) {
        try generate(pages: pages, annotations: annotations, title: title, output: output)
    }
}
