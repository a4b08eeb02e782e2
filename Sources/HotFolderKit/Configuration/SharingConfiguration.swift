import Foundation

/// One key = value pair passed through to CUPS as a job option.
public struct PrintOption: Sendable, Hashable, Codable {
    public let name: String
    public let value: String
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// What a folder does with a document for one destination (seed 000's
/// DocumentSharingConfiguration). Each option category is an allowed set; the
/// first that survives sanitization is the default.
public struct SharingConfiguration: Sendable, Hashable, Codable {
    public var destination: DestinationKind
    public var fileFormats: [FileFormat] = [.pdf]
    public var pageSelections: [PageSelection] = [.all]
    public var annotationOptions: [AnnotationOption]
    /// The output's Title metadata (a template); nil keeps the document's.
    public var title: NameTemplate?
    /// The output file name (export) or the CUPS job name (print).
    public var name: NameTemplate

    // export
    public var exportFolder: String = ""
    public var collision: CollisionPolicy = .rename

    // print
    /// nil or empty: the CUPS default destination.
    public var printer: String?
    public var copies: Int = 1
    public var sides: String?
    public var media: String?
    public var color: String?
    public var orientation: String?
    public var options: [PrintOption] = []
    /// Seconds a submitted job may take before it is given up and failed.
    public var timeout: Double = 3600

    public init(destination: DestinationKind) {
        self.destination = destination
        switch destination {
        case .export:
            annotationOptions = [.embed]
            // A parse failure is impossible for this literal; the fallback keeps
            // the initializer total.
            name = (try? NameTemplate(parsing: "{stem}")) ?? NameTemplate.empty
        case .print:
            // The seed's rule: printing flattens for print unless told otherwise.
            annotationOptions = [.flattenForPrint]
            name = (try? NameTemplate(parsing: "{title|stem}")) ?? NameTemplate.empty
        }
    }
}

extension NameTemplate {
    static let empty = NameTemplate(pieces: [], source: "")

    init(pieces: [Piece], source: String) {
        self.pieces = pieces
        self.source = source
    }
}
