// RUN: tandem-opt %s --tandem-simulate="target=b200" -verify-diagnostics -o /dev/null

// expected-error @+1 {{unknown target preset 'b200'; known presets: h100, h200, mi300x}}
module {
}
