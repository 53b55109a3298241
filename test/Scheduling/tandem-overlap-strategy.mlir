// RUN: tandem-opt %s --tandem-overlap=strategy=fast -verify-diagnostics -o /dev/null

// expected-error @+1 {{unknown strategy 'fast'; expected auto, none, bulk, reschedule, pipeline, pipeline+reschedule, te-preset, te-preset+reschedule, split or split+reschedule}}
module attributes {tandem.target = #tandem.target<"h200">} {
}
