/** One whisper.cpp model that a name stands for: its file as published, byte for byte. */
export interface WhisperModel {
  /** `tiny.en`, `base`, `large-v3-turbo-q5_0`: the file is `ggml-<name>.bin`. */
  name: string;
  bytes: number;
  /** SHA-256 of the whole file, in lower-case hex. */
  sha256: string;
}

/**
 * The models of whisper.cpp's public model location, huggingface.co/ggerganov/whisper.cpp, with the size and SHA-256
 * of its git LFS pointers (`size`, `oid sha256:`) at revision 5359861c739e955e79d9a303bcbc70fb988958b1 of that
 * repository. Two catalogues of other open-source projects pinning that revision were compared value by value, and
 * agree; single values were checked against further ones (Nix `fetchurl` hashes, download scripts). A name whose
 * SHA-256 could not be found in such a source is not here: a file that cannot be checked is not fetched.
 * English-only models end in `.en`; the others are multilingual. `-q5_0`, `-q5_1` and `-q8_0` are quantized builds
 * of the same weights: smaller files and less memory, at some cost in accuracy.
 */
export const WHISPER_MODELS: readonly WhisperModel[] = [
  { name: 'tiny', bytes: 77_691_713, sha256: 'be07e048e1e599ad46341c8d2a135645097a538221678b7acdd1b1919c6e1b21' },
  { name: 'tiny.en', bytes: 77_704_715, sha256: '921e4cf8686fdd993dcd081a5da5b6c365bfde1162e72b08d75ac75289920b1f' },
  { name: 'base', bytes: 147_951_465, sha256: '60ed5bc3dd14eea856493d334349b405782ddcaf0028d4b5df4088345fba2efe' },
  { name: 'base.en', bytes: 147_964_211, sha256: 'a03779c86df3323075f5e796cb2ce5029f00ec8869eee3fdfb897afe36c6d002' },
  { name: 'small', bytes: 487_601_967, sha256: '1be3a9b2063867b937e64e2ec7483364a79917e157fa98c5d94b5c1fffea987b' },
  { name: 'small.en', bytes: 487_614_201, sha256: 'c6138d6d58ecc8322097e0f987c32f1be8bb0a18532a3f88f734d1bbf9c41e5d' },
  { name: 'medium', bytes: 1_533_763_059, sha256: '6c14d5adee5f86394037b4e4e8b59f1673b6cee10e3cf0b11bbdbee79c156208' },
  {
    name: 'medium.en',
    bytes: 1_533_774_781,
    sha256: 'cc37e93478338ec7700281a7ac30a10128929eb8f427dda2e865faa8f6da4356',
  },
  {
    name: 'large-v3',
    bytes: 3_095_033_483,
    sha256: '64d182b440b98d5203c4f9bd541544d84c605196c4f7b845dfa11fb23594d1e2',
  },
  {
    name: 'large-v3-turbo',
    bytes: 1_624_555_275,
    sha256: '1fc70f774d38eb169993ac391eea357ef47c88757ef72ee5943879b7e8e2bc69',
  },
  { name: 'tiny-q5_1', bytes: 32_152_673, sha256: '818710568da3ca15689e31a743197b520007872ff9576237bda97bd1b469c3d7' },
  { name: 'tiny-q8_0', bytes: 43_537_433, sha256: 'c2085835d3f50733e2ff6e4b41ae8a2b8d8110461e18821b09a15c40c42d1cca' },
  {
    name: 'tiny.en-q5_1',
    bytes: 32_166_155,
    sha256: 'c77c5766f1cef09b6b7d47f21b546cbddd4157886b3b5d6d4f709e91e66c7c2b',
  },
  {
    name: 'tiny.en-q8_0',
    bytes: 43_550_795,
    sha256: '5bc2b3860aa151a4c6e7bb095e1fcce7cf12c7b020ca08dcec0c6d018bb7dd94',
  },
  { name: 'base-q5_1', bytes: 59_707_625, sha256: '422f1ae452ade6f30a004d7e5c6a43195e4433bc370bf23fac9cc591f01a8898' },
  { name: 'base-q8_0', bytes: 81_768_585, sha256: 'c577b9a86e7e048a0b7eada054f4dd79a56bbfa911fbdacf900ac5b567cbb7d9' },
  {
    name: 'base.en-q5_1',
    bytes: 59_721_011,
    sha256: '4baf70dd0d7c4247ba2b81fafd9c01005ac77c2f9ef064e00dcf195d0e2fdd2f',
  },
  {
    name: 'base.en-q8_0',
    bytes: 81_781_811,
    sha256: 'a4d4a0768075e13cfd7e19df3ae2dbc4a68d37d36a7dad45e8410c9a34f8c87e',
  },
  {
    name: 'small-q5_1',
    bytes: 190_085_487,
    sha256: 'ae85e4a935d7a567bd102fe55afc16bb595bdb618e11b2fc7591bc08120411bb',
  },
  {
    name: 'small-q8_0',
    bytes: 264_464_607,
    sha256: '49c8fb02b65e6049d5fa6c04f81f53b867b5ec9540406812c643f177317f779f',
  },
  {
    name: 'small.en-q5_1',
    bytes: 190_098_681,
    sha256: 'bfdff4894dcb76bbf647d56263ea2a96645423f1669176f4844a1bf8e478ad30',
  },
  {
    name: 'small.en-q8_0',
    bytes: 264_477_561,
    sha256: '67a179f608ea6114bd3fdb9060e762b588a3fb3bd00c4387971be4d177958067',
  },
  {
    name: 'medium-q5_0',
    bytes: 539_212_467,
    sha256: '19fea4b380c3a618ec4723c3eef2eb785ffba0d0538cf43f8f235e7b3b34220f',
  },
  {
    name: 'medium-q8_0',
    bytes: 823_369_779,
    sha256: '42a1ffcbe4167d224232443396968db4d02d4e8e87e213d3ee2e03095dea6502',
  },
  {
    name: 'medium.en-q5_0',
    bytes: 539_225_533,
    sha256: '76733e26ad8fe1c7a5bf7531a9d41917b2adc0f20f2e4f5531688a8c6cd88eb0',
  },
  {
    name: 'medium.en-q8_0',
    bytes: 823_382_461,
    sha256: '43fa2cd084de5a04399a896a9a7a786064e221365c01700cea4666005218f11c',
  },
  {
    name: 'large-v3-q5_0',
    bytes: 1_081_140_203,
    sha256: 'd75795ecff3f83b5faa89d1900604ad8c780abd5739fae406de19f23ecd98ad1',
  },
  {
    name: 'large-v3-turbo-q5_0',
    bytes: 574_041_195,
    sha256: '394221709cd5ad1f40c46e6031ca61bce88931e6e088c188294c6d5a55ffa7e2',
  },
  {
    name: 'large-v3-turbo-q8_0',
    bytes: 874_188_075,
    sha256: '317eb69c11673c9de1e1f0d459b253999804ec71ac4c23c17ecf5fbe24e259a1',
  },
];

/** The file a model's name stands for, as the model location publishes it. */
export const modelFileName = (name: string): string => `ggml-${name}.bin`;

/** Whether a model recognises only English (whisper.cpp's `.en` builds). */
export const isEnglishOnly = (name: string): boolean => /\.en(?:-|$)/.test(name);
