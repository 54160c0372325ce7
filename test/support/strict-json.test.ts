import { describe, expect, it } from 'vitest';
import { parseStrictJson } from './strict-json.js';

describe('parseStrictJson', () => {
  it('parses what JSON.parse parses', () => {
    const text = '{"level":30,"msg":"request","nested":{"a":[1,{"b":"x\\"y"}],"msg":"inner"},"list":[{"k":1},{"k":2}],"s":"{\\"msg\\":1,\\"msg\\":2}"}';
    expect(parseStrictJson(text)).toEqual(JSON.parse(text));
    expect(parseStrictJson('[1,"a",null,true]')).toEqual([1, 'a', null, true]);
  });

  it('refuses a key repeated in one object, which JSON.parse silently accepts', () => {
    expect(JSON.parse('{"msg":"a","msg":"b"}')).toEqual({ msg: 'b' });
    expect(() => parseStrictJson('{"msg":"a","msg":"b"}')).toThrow('duplicate key $.msg');
    expect(() => parseStrictJson('{"msg":"token has been revoked","level":30,"msg":"request rejected"}')).toThrow('duplicate key $.msg');
  });

  it('refuses nested duplicates, in objects and in arrays of objects', () => {
    expect(() => parseStrictJson('{"a":{"b":1,"c":{"d":1,"d":2}}}')).toThrow('duplicate key $.a.c.d');
    expect(() => parseStrictJson('{"a":[{"k":1},{"k":1,"k":2}]}')).toThrow('duplicate key $.a[].k');
  });

  it('compares decoded keys, and is not fooled by keys inside string values', () => {
    expect(() => parseStrictJson('{"msg":1,"\\u006dsg":2}')).toThrow('duplicate key $.msg');
    expect(() => parseStrictJson('{"a":"\\"msg\\":","msg":1}')).not.toThrow();
    expect(() => parseStrictJson('{"a":{"msg":1},"msg":2}')).not.toThrow(); // same key, different objects
  });

  it('refuses text that is not JSON', () => {
    expect(() => parseStrictJson('sluice scheduler: connect ECONNREFUSED 127.0.0.1:6379')).toThrow(SyntaxError);
    expect(() => parseStrictJson('{"a":1')).toThrow(SyntaxError);
  });
});
