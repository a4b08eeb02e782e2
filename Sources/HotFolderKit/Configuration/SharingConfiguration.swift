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

    // image output
    public var imageType: ImageType = .png
    public var imageDPI: Double = 150
    /// JPEG quality, 1–100.
    public var imageQuality: Int = 85
    /// Image output of a longer document may not use `all` or `annotated` (seed 000: 20).
    public var imageMaxPages: Int = 20

    // export
    public var exportFolder: String = ""
    public var collision: CollisionPolicy = .rename
    /// Also write `<name>.preview.png` of the first page (seed 001).
    public var preview = false
    /// Below this much free space in the export folder, exports wait.
    public var minFree: Int64 = 64 << 20

    // print
    /// nil or empty: the CUPS default destination.
    public var printer: String?
    public var copies: Int = 1
    /// The most copies a job ticket may ask for (nil: 10, or `copies` where that is more).
    public var maxCopies: Int?
    public var copiesLimit: Int { maxCopies ?? max(10, copies) }
    /// The allowed `sides` values, the first being the default; empty: the printer's default.
    public var sidesOptions: [String] = []
    public var sides: String? { sidesOptions.first }
    public var media: String?
    public var color: String?
    public var orientation: String?
    public var options: [PrintOption] = []
    /// Seconds a submitted job may take before it is given up and failed.
    public var timeout: Double = 3600

    static let sidesValues = ["one-sided", "two-sided-long-edge", "two-sided-short-edge"]

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
