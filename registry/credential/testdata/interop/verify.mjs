// node verify.mjs CREDENTIAL.json DID-DOCUMENT.json
// Verifies an Open Badges credential's eddsa-rdfc-2022 proof with Digital
// Bazaar's vc library, offline. Prints {"verified": bool, "error": …}.
import * as vc from '@digitalbazaar/vc';
import {DataIntegrityProof} from '@digitalbazaar/data-integrity';
import {cryptosuite} from '@digitalbazaar/eddsa-rdfc-2022-cryptosuite';
import fs from 'fs';
import {loader} from './loader.mjs';

const credential = JSON.parse(fs.readFileSync(process.argv[2]));
const didDocument = JSON.parse(fs.readFileSync(process.argv[3]));
const suite = new DataIntegrityProof({cryptosuite});
try {
  const result = await vc.verifyCredential({credential, suite, documentLoader: loader(didDocument),
    checkStatus: async () => ({verified: true})});
  const error = result.error ? (result.error.errors || [result.error]).map(e => e.message).join('; ') : undefined;
  console.log(JSON.stringify({verified: result.verified, error}));
} catch (e) {
  console.log(JSON.stringify({verified: false, error: e.message}));
}
