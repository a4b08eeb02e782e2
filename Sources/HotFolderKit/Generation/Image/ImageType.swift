/// The image formats pages are rendered to.
public enum ImageType: String, Sendable, Codable, CaseIterable {
    case png
    case jpeg

    /// The file name extension, without the dot.
    public var ext: String {
        switch self {
        case .png: "png"
        case .jpeg: "jpg"
        }
    }
}
