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
