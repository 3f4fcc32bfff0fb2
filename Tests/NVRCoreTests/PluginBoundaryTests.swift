import CNVRPlugin
import Foundation
import NVRMedia
import NVRPluginHost
import Testing

@testable import NVRPluginHost
@testable import NVRRecorder

/// What a plugin hands the host in push mode is checked and converted in one place
/// (`PluginStreams`); the session watchdog notices connections that stopped yielding video.
struct PluginBoundaryTests {
    func params(
        _ codec: nvr_codec, width: Int32 = 640, height: Int32 = 360, rate: Int32 = 0, channels: Int32 = 0,
        tb: (Int32, Int32) = (1, 90_000), size: UInt32 = UInt32(MemoryLayout<nvr_stream_params>.size)
    ) -> nvr_stream_params {
        nvr_stream_params(
            struct_size: size, codec: UInt32(codec.rawValue), width: width, height: height, sample_rate: rate,
            channels: channels, timebase_num: tb.0, timebase_den: tb.1, extradata: nil, extradata_size: 0)
    }

    func convert(_ list: [nvr_stream_params]) -> Result<PluginStreams, PluginError> {
        list.withUnsafeBytes { PluginStreams.convert($0.baseAddress!, count: list.count) }
    }

    @Test func audioFirstAndUnknownCodecsKeepTheirPacketsOnTheRightStream() throws {
        var opus = params(NVR_CODEC_AAC)
        opus.codec = 99
        let s = try convert([params(NVR_CODEC_AAC, rate: 48_000, channels: 1), opus, params(NVR_CODEC_H264)]).get()
        #expect(s.descriptions.map(\.codec) == [.h264, .aac])
        #expect(s.dropped.count == 1 && s.dropped[0].contains("stream 1"))
        func packet(_ index: Int32, size: Int = 10) -> InputPacket? {
            let bytes = [UInt8](repeating: 7, count: max(size, 0))
            return bytes.withUnsafeBufferPointer { b in
                var p = nvr_packet(
                    struct_size: UInt32(MemoryLayout<nvr_packet>.size), stream_index: index, pts: 0, dts: 0,
                    duration: 0,
                    key: 1, data: b.baseAddress, size: size)
                return withUnsafePointer(to: &p) { s.packet(UnsafeRawPointer($0)) }
            }
        }
        #expect(packet(2)?.stream == 0)  // the plugin's video
        #expect(packet(0)?.stream == 1)  // its AAC
        #expect(packet(1) == nil)  // the codec nobody records, never written as AAC
        #expect(packet(3) == nil && packet(-1) == nil)
        #expect(packet(2, size: -5) == nil)
    }

    @Test func structsAreReadByTheirOwnSize() throws {
        // A newer plugin whose stream struct is 16 bytes larger: fields are where v1 put them.
        let stride = MemoryLayout<nvr_stream_params>.size + 16
        var raw = [UInt8](repeating: 0, count: stride * 2)
        let a = params(NVR_CODEC_H265, size: UInt32(stride))
        let b = params(NVR_CODEC_AAC, rate: 16_000, channels: 2, size: UInt32(stride))
        raw.withUnsafeMutableBytes { r in
            r.storeBytes(of: a, toByteOffset: 0, as: nvr_stream_params.self)
            r.storeBytes(of: b, toByteOffset: stride, as: nvr_stream_params.self)
        }
        let s = try raw.withUnsafeBytes { try PluginStreams.convert($0.baseAddress!, count: 2).get() }
        #expect(s.descriptions.map(\.codec) == [.h265, .aac] && s.descriptions[1].sampleRate == 16_000)
        // Smaller than v1's, or no video at all: refused with a reason.
        #expect(throws: PluginError.self) { try convert([params(NVR_CODEC_H264, size: 8)]).get() }
        #expect(throws: PluginError.self) { try convert([params(NVR_CODEC_AAC, rate: 48_000, channels: 1)]).get() }
    }

    @Test func implausibleValuesAreDroppedOrUnknown() throws {
        let s = try convert([
            params(NVR_CODEC_H264, width: 16, height: Int32.max), params(NVR_CODEC_AAC, rate: 0, channels: 1),
        ]).get()
        #expect(s.descriptions.count == 1 && s.descriptions[0].width == 0 && s.descriptions[0].height == 0)
        #expect(throws: PluginError.self) { try convert([params(NVR_CODEC_H264, tb: (0, 0))]).get() }
    }

    @Test func watchdogGivesUpOnConnectionsWithoutUsableVideo() {
        let s: UInt64 = 1_000_000_000
        var w = FrameWatchdog(now: 0)
        #expect(w.check(now: 5 * s) == nil)
        #expect(w.check(now: 11 * s)?.contains("no usable video") == true)
        w = FrameWatchdog(now: 0)
        for t in 1...70 {  // frames every second but no key frame
            w.saw(isKey: false)
            let why = w.check(now: UInt64(t) * s)
            if t <= 60 {
                #expect(why == nil)
            } else {
                #expect(why?.contains("no key frame") == true)
                break
            }
        }
        w = FrameWatchdog(now: 0)
        for t in 1...100 {
            w.saw(isKey: t % 2 == 0)
            #expect(w.check(now: UInt64(t) * s) == nil)
        }
    }
}
