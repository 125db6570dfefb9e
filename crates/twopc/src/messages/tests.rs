//! Tests of each message: round trips, and refusal of truncated, oversized and malformed input.
