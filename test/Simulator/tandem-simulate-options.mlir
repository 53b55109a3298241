// RUN: tandem-opt %s --tandem-simulate="target=h100 report=-" -o /dev/null | FileCheck %s --check-prefix=H100
// RUN: tandem-opt %s --tandem-simulate="target=h200 report=-" -o /dev/null | FileCheck %s --check-prefix=H200

// A module without a target simulates with the preset the option names: the
// copy moves 4 MiB (2 MiB read, 2 MiB written) and is bandwidth-bound:
// 4194304 B / (HBM bandwidth x 0.9) + 4 us launch.
module {
  func.func @f(%x: tensor<1024x1024xbf16>) -> tensor<1024x1024xbf16> {
    %y = tandem.elementwise copy %x : tensor<1024x1024xbf16> -> tensor<1024x1024xbf16>
    return %y : tensor<1024x1024xbf16>
  }
}

// h100, 3350 GB/s: 4194304 / 3.015e6 B/us + 4 = 5.391 us.
// H100: "span_us": 5.391{{[0-9]*}},
// H100: "target": "h100"
// h200, 4800 GB/s: 4194304 / 4.32e6 B/us + 4 = 4.971 us.
// H200: "span_us": 4.970{{[0-9]*}},
// H200: "target": "h200"
