// node verify.mjs CREDENTIAL.json DID-DOCUMENT.json [STATUS-LIST.json]
// Verifies an Open Badges credential's eddsa-rdfc-2022 proof with Digital
// Bazaar's vc library, offline, and with a status list its revocation
// status (Digital Bazaar's Bitstring Status List library). Prints
// {"verified": bool, "error": …}.
import * as vc from '@digitalbazaar/vc';
import {DataIntegrityProof} from '@digitalbazaar/data-integrity';
import {cryptosuite} from '@digitalbazaar/eddsa-rdfc-2022-cryptosuite';
import fs from 'fs';
import {checkStatus} from '@digitalbazaar/vc-bitstring-status-list';
import {loader} from './loader.mjs';

const credential = JSON.parse(fs.readFileSync(process.argv[2]));
const didDocument = JSON.parse(fs.readFileSync(process.argv[3]));
const statusList = process.argv[4] ? JSON.parse(fs.readFileSync(process.argv[4])) : undefined;
const suite = new DataIntegrityProof({cryptosuite});
const documentLoader = loader(didDocument, statusList);
try {
  const result = await vc.verifyCredential({credential, suite, documentLoader,
    checkStatus: statusList ? (options) => checkStatus({...options, suite, documentLoader, verifyStatusListCredential: true})
      : async () => ({verified: true})});
  let error = result.error ? (result.error.errors || [result.error]).map(e => e.message).join('; ') : undefined;
  let verified = result.verified;
  // The status library verifies the list and reads the bit; a set bit is
  // its answer (status: true), not a failure of verification.
  for (const r of result.statusResult?.results || []) {
    if (r.status === true) {
      verified = false;
      error = 'the credential is ' + (r.credentialStatus?.statusPurpose === 'suspension' ? 'suspended' : 'revoked');
    }
  }
  console.log(JSON.stringify({verified, error}));
} catch (e) {
  console.log(JSON.stringify({verified: false, error: e.message}));
}
