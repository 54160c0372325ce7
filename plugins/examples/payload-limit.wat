;; payload-limit: matches when the action context (JSON) is longer than 200 bytes.
;; The Sluice plugin ABI (docs/guardrails.md): export `memory` and `alloc(len) -> ptr`; each
;; condition function takes (ptr, len) of the action context as UTF-8 JSON and returns
;; (ptr << 32) | len of its UTF-8 JSON answer {"verdict": bool, "message"?: string}.
(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"verdict\":true,\"message\":\"action context larger than 200 bytes\"}")
  (data (i32.const 128) "{\"verdict\":false}")
  ;; One call at a time per instance: the input always goes to the same place.
  (func (export "alloc") (param $len i32) (result i32) (i32.const 1024))
  (func $answer (param $ptr i32) (param $len i32) (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (local.get $ptr)) (i64.const 32)) (i64.extend_i32_u (local.get $len))))
  (func (export "evaluate") (param $ptr i32) (param $len i32) (result i64)
    (if (result i64) (i32.gt_u (local.get $len) (i32.const 200))
      (then (call $answer (i32.const 0) (i32.const 65)))
      (else (call $answer (i32.const 128) (i32.const 17))))))
