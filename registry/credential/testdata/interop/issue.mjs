// node issue.mjs CREDENTIAL.json HOST
// Signs a credential (eddsa-rdfc-2022) with Digital Bazaar's vc library
// under a fresh Ed25519 key of did:web:HOST, offline. Prints
// {"credential": …, "didDocument": …}.
import * as vc from '@digitalbazaar/vc';
import {DataIntegrityProof} from '@digitalbazaar/data-integrity';
import {cryptosuite} from '@digitalbazaar/eddsa-rdfc-2022-cryptosuite';
import * as Ed25519Multikey from '@digitalbazaar/ed25519-multikey';
import fs from 'fs';
import {loader} from './loader.mjs';

const credential = JSON.parse(fs.readFileSync(process.argv[2]));
const did = 'did:web:' + process.argv[3];
const key = await Ed25519Multikey.generate({id: did + '#key-1', controller: did});
const vm = await key.export({publicKey: true, includeContext: false});
const didDocument = {'@context': ['https://www.w3.org/ns/did/v1', 'https://w3id.org/security/multikey/v1'], id: did,
  verificationMethod: [vm], assertionMethod: [vm.id]};
credential.issuer = typeof credential.issuer === 'object' ? {...credential.issuer, id: did} : did;
const suite = new DataIntegrityProof({signer: key.signer(), cryptosuite});
const signed = await vc.issue({credential, suite, documentLoader: loader(didDocument)});
console.log(JSON.stringify({credential: signed, didDocument}));
