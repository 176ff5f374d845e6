import { describe, expect, it } from 'vitest';
import {
  standardizeCtvid,
  standardizeDob,
  standardizeEmail,
  standardizeMaid,
  standardizeName,
  standardizePhone,
  standardizeVin,
  standardizeZip,
} from '../../../src/privacy/drop/standardize.ts';

describe('standardizeEmail: remove all whitespace, then lowercase; nothing else changes', () => {
  it.each([
    [' Anna.Smith@Domain.com\t', 'anna.smith@domain.com'],
    ['anna .smith@ domain.com', 'anna.smith@domain.com'],
    ['A.Lice+Tag@Gmail.COM', 'a.lice+tag@gmail.com'],
    ['first.last+news@googlemail.com', 'first.last+news@googlemail.com'],
    ["o'neil-x_y@ex-ample.co.uk", "o'neil-x_y@ex-ample.co.uk"],
    ['\u00a0nbsp@example.com\u2003', 'nbsp@example.com'],
  ])('%j → %j', (input, output) => expect(standardizeEmail(input)).toBe(output));

  it.each([[undefined], [null], [''], [' \t\n ']])('%j has no email', (input) => {
    expect(standardizeEmail(input)).toBeUndefined();
  });
});

describe('standardizePhone: digits only, then the last 10 (all when fewer)', () => {
  it.each([
    ['+1(415)555-9317', '4155559317'],
    ['1-415-555-9317', '4155559317'],
    ['(415) 555 9317', '4155559317'],
    ['415.555.9317', '4155559317'],
    ['+14155559317', '4155559317'],
    ['+44 20 7946 0958', '2079460958'],
    ['555-1234', '5551234'],
    ['＋１ ４１５ ５５５ ９３１７', '4155559317'],
  ])('%j → %j', (input, output) => expect(standardizePhone(input)).toBe(output));

  it('an extension is not dropped: the specification has no rule for it', () => {
    expect(standardizePhone('415-555-9317 ext 12')).toBe('5555931712');
  });

  it.each([[undefined], [null], [''], ['n/a'], ['+ ( ) -']])('%j has no phone', (input) => {
    expect(standardizePhone(input)).toBeUndefined();
  });
});

describe('standardizeName: lowercase, Greek and Cyrillic transliterated, Latin folded, letters and digits', () => {
  it.each([
    ['Juan Pablo', 'juanpablo'],
    ['  MARY-JANE ', 'maryjane'],
    ["O'Brien", 'obrien'],
    ['José', 'jose'],
    ['Müller', 'muller'],
    ['Ångström', 'angstrom'],
    ['Straße', 'strasse'],
    ['Łukasz', 'lukasz'],
    ['Søren', 'soren'],
    ['Æsir', 'aesir'],
    ['Þór', 'thor'],
    ['İlkay', 'ilkay'],
    ['Ĳssel', 'ijssel'],
    ['Иван', 'ivan'],
    ['Ёлкина', 'yolkina'],
    ['Щербакова', 'shcherbakova'],
    ['Юлия', 'yuliya'],
    ['Θεοδώρου', 'theodoroy'],
    ['Χρήστος', 'christos'],
    ['田中', '田中'],
    ['김', '김'],
    ['ガブリエル', 'ガブリエル'],
    ['محمد', 'محمد'],
    ['שלום', 'שלום'],
    ['Louis XIV 2nd', 'louisxiv2nd'],
    ['ﬁona', 'fiona'],
  ])('%j → %j', (input, output) => expect(standardizeName(input)).toBe(output));

  it('composed and decomposed forms give the same name', () => {
    expect(standardizeName('Jose\u0301')).toBe(standardizeName('Jos\u00e9'));
  });

  it.each([[undefined], [null], [''], [' - . '], ["'"]])('%j has no name', (input) => {
    expect(standardizeName(input)).toBeUndefined();
  });
});

describe('standardizeZip: alphanumerics, ZIP+4 dropped, lowercase, leading zeros removed, first five', () => {
  it.each([
    ['91790-3771', '91790'],
    ['917903771', '91790'],
    ['91790 - 3771', '91790'],
    ['02134', '2134'],
    ['02134-1234', '2134'],
    ['00300-9999', '300'],
    ['00712345', '71234'],
    ['  91790  ', '91790'],
    ['M1B 1A1', 'm1b1a'],
    ['k1a-0b1', 'k1a0b'],
    ['SW1A 1AA', 'sw1a1'],
  ])('%j → %j', (input, output) => expect(standardizeZip(input)).toBe(output));

  it.each([[undefined], [null], [''], ['00000'], ['-']])('%j has no ZIP', (input) => {
    expect(standardizeZip(input)).toBeUndefined();
  });
});

describe('standardizeDob: YYYYMMDD', () => {
  it.each([
    ['July 4, 1776', '17760704'],
    ['Jul 4 1776', '17760704'],
    ['4 July 1776', '17760704'],
    ['Sept. 9, 1990', '19900909'],
    ['sep 9, 1990', '19900909'],
    ['1985-07-04', '19850704'],
    ['1985-7-4', '19850704'],
    ['1985-07-04T00:00:00Z', '19850704'],
    ['1985-07-04 00:00:00', '19850704'],
    ['19850704', '19850704'],
    ['1985/07/04', '19850704'],
    ['07/04/1985', '19850704'],
    ['7/4/1985', '19850704'],
    ['07-04-1985', '19850704'],
    ['2000-02-29', '20000229'],
  ])('%j → %j', (input, output) => expect(standardizeDob(input)).toBe(output));

  it('reads a Date in UTC', () => expect(standardizeDob(new Date(Date.UTC(1985, 6, 4)))).toBe('19850704'));

  it.each([
    [undefined],
    [null],
    [''],
    ['1900-02-29'],
    ['1985-13-01'],
    ['02/30/2000'],
    ['7/4/85'],
    ['04.07.1985'],
    ['1985'],
    ['Smarch 4, 1985'],
    [new Date('not a date')],
  ])('%j has no date of birth', (input) => expect(standardizeDob(input)).toBeUndefined());
});

describe('MAID, VIN and CTVID: character set, lowercase, and a length they must have', () => {
  it('MAID: hexadecimal only, 32 characters', () => {
    expect(standardizeMaid('A3F1C2D4-5678-90AB-CDEF-1234567890AB')).toBe('a3f1c2d4567890abcdef1234567890ab');
    expect(standardizeMaid('{a3f1c2d4-5678-90ab-cdef-1234567890ab}')).toBe('a3f1c2d4567890abcdef1234567890ab');
    expect(standardizeMaid('a3f1c2d4-5678-90ab-cdef-1234567890')).toBeUndefined();
    expect(standardizeMaid('')).toBeUndefined();
  });

  it('VIN: alphanumeric only, 17 characters', () => {
    expect(standardizeVin(' 1hgcm82633a-004352 ')).toBe('1hgcm82633a004352');
    expect(standardizeVin('1HGCM82633A00435')).toBeUndefined();
    expect(standardizeVin(null)).toBeUndefined();
  });

  it('CTVID: alphanumeric only, 8 to 32 characters', () => {
    expect(standardizeCtvid('SmartTV_9F8E7D6C')).toBe('smarttv9f8e7d6c');
    expect(standardizeCtvid('ab-cd-ef-gh')).toBe('abcdefgh');
    expect(standardizeCtvid('abc1234')).toBeUndefined();
    expect(standardizeCtvid('x'.repeat(33))).toBeUndefined();
  });
});
