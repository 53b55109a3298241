// RUN: tandem-opt %s --tandem-copy-engines=mode=fast -verify-diagnostics

// expected-error @below {{unknown mode 'fast'; expected cost or all}}
module {
}
