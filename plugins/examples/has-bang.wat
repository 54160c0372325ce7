;; has-bang: matches when the action context contains a "!" (say, a shouting payload).
;; Same ABI as payload-limit.wat.
(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"verdict\":true,\"message\":\"found a !\"}")
  (data (i32.const 128) "{\"verdict\":false}")
  (func (export "alloc") (param $len i32) (result i32) (i32.const 1024))
  (func $answer (param $ptr i32) (param $len i32) (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (local.get $ptr)) (i64.const 32)) (i64.extend_i32_u (local.get $len))))
  (func (export "evaluate") (param $ptr i32) (param $len i32) (result i64)
    (local $i i32)
    (block $done
      (loop $scan
        (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
        (if (i32.eq (i32.load8_u (i32.add (local.get $ptr) (local.get $i))) (i32.const 33))
          (then (return (call $answer (i32.const 0) (i32.const 38)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $scan)))
    (call $answer (i32.const 128) (i32.const 17))))
